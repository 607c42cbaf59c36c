export function Yield() { return <p>Coming soon</p>; }
