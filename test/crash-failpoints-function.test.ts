import { describeFailpointCrashes } from './support/failpoint-crashes';

// The edge-function log's dataset (one stored rollup per file): docs/durability.md, "Crashes and recovery".
describeFailpointCrashes('functionEdgeLogs');
