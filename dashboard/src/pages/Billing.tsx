export function Billing() { return <p>Coming soon</p>; }
