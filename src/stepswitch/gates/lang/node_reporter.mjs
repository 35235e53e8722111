// Stepswitch's reporter for node's own test runner (`node --test`), loaded through NODE_OPTIONS
// by the suite gate (gates/lang/node.py): one JSON object a line for each test that passed or
// failed, with its file and the names of the suites around it, which node's junit reporter
// leaves out; a test file that fails as a whole (it does not load) carries what it wrote to
// stderr. It reads the runner's events only; it changes nothing the tests do.
const STDERR_CHARS = 4000;

export default async function* stepswitchReporter(source) {
  const open = new Map(); // file -> the names of the tests started, by nesting
  const stderr = new Map(); // file -> what its process wrote to stderr, its head
  for await (const event of source) {
    const data = event.data ?? {};
    const file = data.file ?? null;
    if (event.type === 'test:stderr') {
      const text = (stderr.get(file) ?? '') + String(data.message ?? '');
      stderr.set(file, text.slice(0, STDERR_CHARS));
      continue;
    }
    if (event.type === 'test:start') {
      const names = open.get(file) ?? [];
      names.length = data.nesting;
      names.push(data.name);
      open.set(file, names);
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const around = (open.get(file) ?? []).slice(0, data.nesting);
    const details = data.details ?? {};
    const error = details.error;
    const cause = error?.cause ?? error;
    let message = cause ? String(cause.message ?? cause) : '';
    if (error?.exitCode !== undefined && stderr.get(file)) {
      message = stderr.get(file); // the file's process failed: what it said, not "test failed"
    }
    yield JSON.stringify({
      event: event.type === 'test:fail' ? 'fail' : 'pass',
      path: [...around, data.name],
      file,
      suite: details.type === 'suite',
      skipped: Boolean(data.skip || data.todo),
      message,
    }) + '\n';
  }
}
