export function SessionDetail({ id }: { id: string }) { return <p>{id}</p>; }
