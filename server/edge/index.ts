export { edgeTokens, type EdgeTokens } from './tokens.ts';
export { createEdgeIngest, type EdgeIngest, type EdgeIngestDeps } from './ingest.ts';
export { parseEdgeBatch, MAX_BATCH_ENTRIES } from './batch-schema.ts';
export { createShipper, type Shipper, type ShipperDeps } from './shipper.ts';
