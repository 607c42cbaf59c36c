export function Webhooks() { return <p>Coming soon</p>; }
