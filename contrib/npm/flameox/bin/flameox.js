#!/usr/bin/env node
// The flameox launcher: it runs the prebuilt flameox binary that npm
// installed for this machine, as one of this package's optional
// dependencies (@flameox/linux-x64, @flameox/linux-arm64), with the same
// arguments, standard streams and exit status. It downloads nothing, at
// install time or when it runs: a missing binary is an error that says how
// to get one. See docs/npm.md in the flameox repository.
'use strict';

const { spawnSync } = require('child_process');
const os = require('os');

// process.platform and process.arch to the package holding the binary.
const packages = {
  'linux x64': '@flameox/linux-x64',
  'linux arm64': '@flameox/linux-arm64',
};

function fail(message) {
  process.stderr.write('flameox: ' + message + '\n');
  process.exit(3); // docs/exit-codes.md: a capability is unavailable
}

function binaryPath() {
  // FLAMEOX_BINARY runs a flameox built elsewhere through this launcher.
  if (process.env.FLAMEOX_BINARY) {
    return process.env.FLAMEOX_BINARY;
  }
  const key = process.platform + ' ' + process.arch;
  const pkg = packages[key];
  if (!pkg) {
    fail('there is no prebuilt flameox for ' + key + ' (there are: ' +
      Object.keys(packages).join(', ') + '); build it from source: ' +
      'go install github.com/flameox/flameox/cmd/flameox@latest');
  }
  try {
    return require.resolve(pkg + '/bin/flameox');
  } catch (e) {
    fail('the package ' + pkg + ' is not installed, so there is no flameox binary ' +
      'for this machine; npm skips optional dependencies with --omit=optional ' +
      'or --no-optional: reinstall flameox without it');
  }
}

const bin = binaryPath();
const result = spawnSync(bin, process.argv.slice(2), { stdio: 'inherit' });
if (result.error) {
  fail('cannot run ' + bin + ': ' + result.error.message);
}
if (result.signal) {
  // End the same way the binary did, so the caller sees the signal.
  process.kill(process.pid, result.signal);
  process.exit(128 + (os.constants.signals[result.signal] || 0));
}
process.exit(result.status === null ? 1 : result.status);
