export function Button(props: any) { return <button {...props} />; }
