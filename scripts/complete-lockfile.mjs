// Adds lockfile entries for optional platform packages the registry here does not serve,
// so `npm ci` accepts the lockfile; npm skips them on this platform by os/cpu/libc.
import { readFileSync, writeFileSync } from 'node:fs';
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const pkgs = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(pkgs)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (pkgs[key]) continue;
    const platform = name.split('/').pop();
    const os = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'openharmony', 'sunos', 'aix', 'netbsd'].find((o) => platform.includes(o));
    const cpu = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el'].find((c) => platform.includes(`-${c}`));
    const stub = { version: version.replace(/^[\^~]/, ''), optional: true };
    if (entry.dev) stub.dev = true;
    if (os) stub.os = [os];
    if (cpu) stub.cpu = [cpu];
    if (platform.includes('musl')) stub.libc = ['musl'];
    pkgs[key] = stub;
    added++;
  }
}
writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} entries`);
