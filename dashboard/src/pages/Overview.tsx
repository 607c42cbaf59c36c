export function Overview() { return <p>Coming soon</p>; }
