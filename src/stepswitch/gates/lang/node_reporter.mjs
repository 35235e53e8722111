// Stepswitch's reporter for node's own test runner (`node --test`), loaded through NODE_OPTIONS
// by the suite gate (gates/lang/node.py): one JSON object a line for each test that passed or
// failed, with its file and the names of the suites around it, which node's junit reporter
// leaves out. It reads the runner's events only; it changes nothing the tests do.
export default async function* stepswitchReporter(source) {
  const open = new Map(); // file -> the names of the tests started, by nesting
  for await (const event of source) {
    const data = event.data ?? {};
    const file = data.file ?? null;
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
    yield JSON.stringify({
      event: event.type === 'test:fail' ? 'fail' : 'pass',
      path: [...around, data.name],
      file,
      suite: details.type === 'suite',
      skipped: Boolean(data.skip || data.todo),
      message: cause ? String(cause.message ?? cause) : '',
    }) + '\n';
  }
}
