import { describeFailpointCrashes } from './support/failpoint-crashes';

// The gateway log's dataset (heads and two stored rollups per file): docs/durability.md, "Crashes and recovery".
describeFailpointCrashes('edgeLogs');
