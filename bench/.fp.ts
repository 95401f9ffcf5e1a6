import { measureFootprint } from './footprint';
const r1 = await measureFootprint(1000, 120, console.log);
console.log(JSON.stringify(r1));
const r2 = await measureFootprint(5000, 60, console.log);
console.log(JSON.stringify(r2));
