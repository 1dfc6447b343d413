export interface Shape { w: number }
