export function Sessions() { return <p>Coming soon</p>; }
