export function ApiKeys() { return <p>Coming soon</p>; }
