export { netChange, type NetRange, type NetResult } from './net-change.ts';
