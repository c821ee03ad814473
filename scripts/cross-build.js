'use strict';
// Compiles the addon for one target of scripts/targets.js with zig: the same sources and
// definitions as CMakeLists.txt's addon, C++ runtime (zig's libc++) linked in statically, so that
// the binary needs only the C library and Node. Returns the path of the stripped binary.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { zig, zigEnv } = require('./toolchain');
const { tool } = require('./check-binaries');
const { filesUnder } = require('./source-files');

const root = path.join(__dirname, '..');

function sources() {
  return [...filesUnder('addon'), ...filesUnder('binding')].filter((file) => file.endsWith('.cpp'));
}

function run(command, args) {
  console.log(`> ${path.basename(command)} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: zigEnv() });
  if (result.status !== 0) throw new Error(`${path.basename(command)} failed (${result.status})`);
}

// Node-API's functions, which a Windows DLL must import from node.exe by name.
function importLibrary(compiler, target, dir) {
  const lib = path.join(dir, 'node.lib');
  const def = path.join(path.dirname(require.resolve('node-api-headers/package.json')), 'def', 'node_api.def');
  run(compiler, ['dlltool', '-d', def, '-l', lib, '-m', target.machine]);
  return lib;
}

function linkOptions(compiler, target, dir) {
  switch (target.os) {
    case 'linux':
      // Never unloaded (binding/process_anchor.h); --gc-sections drops unused libc++.
      return [
        '-Wl,-z,nodelete',
        '-Wl,--gc-sections',
        '-Wl,--version-script=binding/symbols.map',
        '-s',
      ];
    case 'darwin':
      // Node-API's functions are found in the node executable at load time. Two-level namespaces
      // keep what the addon exports from standing in for other images' symbols, so it needs no
      // export list (zig 0.11's Mach-O linker takes none).
      // The install name would otherwise be the build path of this machine.
      return ['-Wl,-undefined,dynamic_lookup', '-Wl,-install_name,parklock.node', '-s'];
    case 'win32':
      // WaitOnAddress and WakeByAddressSingle: the API set that Synchronization.lib imports from.
      return [importLibrary(compiler, target, dir), '-lapi-ms-win-core-synch-l1-2-0', '-s'];
    default:
      throw new Error(`no link options for ${target.os}`);
  }
}

// A PE file carries its link time (COFF header, TimeDateStamp), which zig 0.11 cannot be told to
// leave out: zeroed, so that a rebuild from the same sources gives the same bytes on every target
// (Windows does not read it for a DLL that is not bound).
function zeroPeTimestamp(file) {
  const image = fs.readFileSync(file);
  const header = image.readUInt32LE(0x3c);
  if (image.toString('latin1', header, header + 4) !== 'PE\0\0') throw new Error(`${file}: not a PE file`);
  image.writeUInt32LE(0, header + 8);
  fs.writeFileSync(file, image);
}

function crossBuild(target) {
  const compiler = zig();
  const dir = path.join(root, 'build', 'cross', target.tag);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, 'parklock.node');
  const headers = path.dirname(require.resolve('node-api-headers/package.json'));
  const addonApi = require('node-addon-api').include_dir;
  run(compiler, [
    'c++',
    '-target',
    target.zig,
    '-shared',
    '-fPIC',
    '-O2',
    // zig 0.11's link-time optimisation loses a Windows executable's thread-local storage
    // (test/cpp/run-cross.sh); off everywhere, so that what ships is what those tests ran.
    '-fno-lto',
    '-std=c++20',
    '-fvisibility=hidden',
    '-fvisibility-inlines-hidden',
    '-ffunction-sections',
    '-fdata-sections',
    '-DNAPI_VERSION=8',
    '-DNAPI_CPP_EXCEPTIONS',
    '-DNODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS',
    '-DNODE_ADDON_API_DISABLE_DEPRECATED',
    '-iquote',
    'addon',
    '-isystem',
    path.join(headers, 'include'),
    '-isystem',
    path.resolve(root, addonApi),
    ...sources(),
    ...linkOptions(compiler, target, dir),
    '-o',
    out,
  ]);
  // zig 0.11 strips ELF and PE output (-s) but not Mach-O: its local symbols go here.
  if (target.os === 'darwin') tool('llvm-strip', ['-x', out]);
  if (target.os === 'win32') zeroPeTimestamp(out);
  return out;
}

module.exports = { crossBuild };
