import React, { useState } from "react";
import { Button } from "./Button";

export interface Props { title: string }

export function View({ title }: Props) {
  const [n, setN] = useState(0);
  return <div className="view"><Button onClick={() => setN(n + 1)}>{title}</Button></div>;
}

export const Small = (p: Props) => <span>{p.title}</span>;

export default class Panel extends React.Component<Props> {
  render() { return <View title={this.props.title} />; }
}
