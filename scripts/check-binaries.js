#!/usr/bin/env node
'use strict';
// Checks that each prebuilt binary is what its tag promises, with LLVM's binary tools (Debian's
// llvm package), which read ELF, Mach-O and PE alike:
//   - the CPU and file format of the tag;
//   - glibc binaries need no symbol version newer than GLIBC_2.28, and no libstdc++;
//   - musl binaries need musl's libc alone;
//   - Linux binaries export Node-API's entry points and the process anchor, nothing else;
//   - Mach-O binaries leave only Node-API's functions to be looked up at load time (the rest binds
//     to libSystem), and name their minimum macOS;
//   - Windows binaries import Node-API from node.exe and nothing else from it.
//   node scripts/check-binaries.js [TAG...]   checks prebuilds/<TAG>/parklock.node (default: all)
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const MAX_GLIBC = [2, 28];
const NODE_API = /^_?(napi_|node_api_)/;
const MACOS_PRIVATE_FALLBACKS = ['___ulock_wait', '___ulock_wake'];
const EXPORTS = ['napi_register_module_v1', 'node_api_module_get_api_version_v1', 'parklock_process_anchor_v1'];
// glibc's own libraries, and libgcc_s, which every glibc system has (g++ builds use its unwinder).
const GLIBC_LIBRARIES = /^(libgcc_s\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-[\w-]+\.so\.\d)$/;

// The LLVM tool `name` (Debian's llvm-14 names them with a suffix).
function tool(name, args) {
  for (const candidate of [`${name}-14`, name]) {
    try {
      return execFileSync(candidate, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
  }
  throw new Error(`${name} not found (apt-get install llvm)`);
}

function versionAbove(version, limit) {
  const parts = version.split('.').map(Number);
  for (let i = 0; i < limit.length; i++) {
    if ((parts[i] ?? 0) !== limit[i]) return (parts[i] ?? 0) > limit[i];
  }
  return false;
}

function checkElf(tag, file, problems, info) {
  const [, arch, libc] = tag.split('-');
  const header = tool('llvm-readelf', ['-h', '--needed-libs', file]);
  const machine = { x64: 'X86-64', arm64: 'AArch64' }[arch];
  if (!new RegExp(`Machine:\\s+.*${machine}`).test(header)) problems.push(`not an ${machine} ELF file`);
  const needed = [...header.matchAll(/^\s+(\S+\.so[\w.-]*)$/gm)].map((m) => m[1]);
  info.push(`needs ${needed.join(', ')}`);
  const symbols = tool('llvm-objdump', ['-T', file]);
  const versions = [...new Set([...symbols.matchAll(/GLIBC_([\d.]+)/g)].map((m) => m[1]))];
  if (libc === 'glibc') {
    const newest = [...versions].sort((a, b) => (versionAbove(a, b.split('.').map(Number)) ? 1 : -1)).pop();
    info.push(`newest glibc symbol ${newest}`);
    const over = versions.filter((v) => versionAbove(v, MAX_GLIBC));
    if (over.length > 0) problems.push(`needs glibc ${over.join(', ')} (> ${MAX_GLIBC.join('.')})`);
    const other = needed.filter((lib) => !GLIBC_LIBRARIES.test(lib));
    if (other.length > 0) problems.push(`needs libraries beyond glibc: ${other.join(', ')}`);
  } else {
    if (versions.length > 0) problems.push('a musl binary needs versioned glibc symbols');
    if (needed.join() !== 'libc.so') problems.push(`a musl binary needs ${needed.join(', ')}`);
  }
  const exported = tool('llvm-nm', ['-D', '--defined-only', file])
    .split('\n')
    .map((line) => line.split(' ').pop())
    .filter(Boolean)
    .sort();
  if (exported.join() !== EXPORTS.join()) problems.push(`exports ${exported.join(', ')}`);
}

function checkMachO(tag, file, problems, info) {
  const arch = { x64: 'x86_64', arm64: 'arm64' }[tag.split('-')[1]];
  const headers = tool('llvm-objdump', ['--macho', '--private-headers', file]);
  const cpu = tool('llvm-objdump', ['--macho', '--private-header', file]);
  if (!new RegExp(`\\b${arch === 'x86_64' ? 'X86_64' : 'ARM64'}\\b`).test(cpu)) {
    problems.push(`not a ${arch} Mach-O file`);
  }
  const minos = /minos (\S+)/.exec(headers) ?? /LC_VERSION_MIN_MACOSX[\s\S]*?version (\S+)/.exec(headers);
  info.push(`minimum macOS ${minos ? minos[1] : 'unknown'}`);
  const dylibs = [...headers.matchAll(/name (\S+\.dylib)/g)].map((m) => m[1]);
  info.push(`links ${dylibs.join(', ')}`);
  if (dylibs.some((lib) => !lib.startsWith('/usr/lib/'))) problems.push('links a library outside /usr/lib');
  const lookedUp = [...tool('llvm-nm', ['-m', '-u', file]).matchAll(/ (\S+) \(dynamically looked up\)$/gm)].map(
    (m) => m[1],
  );
  const foreign = lookedUp.filter((name) => !NODE_API.test(name));
  info.push(`${lookedUp.length} Node-API functions looked up at load`);
  if (foreign.length > 0) problems.push(`looks up beyond Node-API: ${foreign.join(', ')}`);
  // libSystem's private calls: only __ulock_wait/__ulock_wake, the fallback where macOS before
  // 14.4 lacks os_sync_wait_on_address (addon/os/word_wait_darwin.cpp), which is looked up at run
  // time, never linked, so that the binary loads on older systems.
  const imported = tool('llvm-nm', ['-u', file]).split('\n').map((line) => line.trim()).filter(Boolean);
  const privateCalls = imported.filter((name) => /^___ulock_|^___psynch_|^___workq_/.test(name));
  info.push(`private calls: ${privateCalls.join(', ') || 'none'}`);
  const unexpected = privateCalls.filter((name) => !MACOS_PRIVATE_FALLBACKS.includes(name));
  if (unexpected.length > 0) problems.push(`calls private libSystem functions: ${unexpected.join(', ')}`);
  const linkedOsSync = imported.filter((name) => name.startsWith('_os_sync_'));
  if (linkedOsSync.length > 0) problems.push(`links ${linkedOsSync.join(', ')} (macOS 14.4 and later) instead of looking it up`);
}

function checkPe(tag, file, problems, info) {
  const arch = tag.split('-')[1];
  const headers = tool('llvm-objdump', ['-p', '-f', file]);
  const format = arch === 'x64' ? /file format coff-x86-64/ : /file format coff-arm64/;
  if (!format.test(headers)) problems.push(`not a ${arch} PE file`);
  // Imports are listed per DLL: "DLL Name: X" followed by its functions.
  const dlls = {};
  let current = null;
  for (const line of headers.split('\n')) {
    const dll = /DLL Name: (\S+)/.exec(line);
    if (dll) {
      current = dll[1];
      dlls[current] = [];
    } else if (current && /^\s+\d+\s+\S+/.test(line)) {
      dlls[current].push(line.trim().split(/\s+/).pop());
    } else if (line.trim() === '') {
      current = null;
    }
  }
  info.push(`imports from ${Object.keys(dlls).join(', ')}`);
  const node = Object.keys(dlls).find((name) => name.toLowerCase() === 'node.exe');
  if (!node) problems.push('imports nothing from node.exe');
  else if (dlls[node].some((name) => !NODE_API.test(name))) problems.push('imports non-Node-API functions from node.exe');
  const posix = Object.keys(dlls).filter((name) => !/^(node\.exe|kernel32\.dll|api-ms-win-[\w-]+\.dll|ntdll\.dll|advapi32\.dll|msvcrt\.dll|ucrtbase\.dll)$/i.test(name));
  if (posix.length > 0) problems.push(`imports unexpected DLLs: ${posix.join(', ')}`);
}

// { problems, info, loadable }: `loadable` when this machine's Node could load it.
function checkBinary(tag, file) {
  const problems = [];
  const info = [];
  const os = tag.split('-')[0];
  if (os === 'linux') checkElf(tag, file, problems, info);
  else if (os === 'darwin') checkMachO(tag, file, problems, info);
  else if (os === 'win32') checkPe(tag, file, problems, info);
  else problems.push(`unknown platform ${os}`);
  info.push(`${fs.statSync(file).size} bytes`);
  console.log(`${tag}: ${info.join('; ')}`);
  const host = require('../lib/platform').prebuildTag();
  return { problems, info, loadable: tag === host };
}

module.exports = { checkBinary, tool };

if (require.main === module) {
  const dir = path.join(root, 'prebuilds');
  const tags = process.argv.length > 2 ? process.argv.slice(2) : fs.readdirSync(dir).sort();
  let failed = 0;
  for (const tag of tags) {
    const { problems } = checkBinary(tag, path.join(dir, tag, 'parklock.node'));
    for (const problem of problems) console.error(`  ${tag}: ${problem}`);
    if (problems.length > 0) failed++;
  }
  process.exitCode = failed > 0 ? 1 : 0;
}
