// A process that takes a lock and holds it until killed: `node --import tsx hold-lock.ts <path>`.
import { acquireLock } from '../../src/util/lock-file';

const lock = await acquireLock(process.argv[2]!, 'hold-lock test');
process.stdout.write(`held ${lock.token}\n`);
setInterval(() => undefined, 1 << 30);
