export function Profile() { return <p>Coming soon</p>; }
