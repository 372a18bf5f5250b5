// SPDX-License-Identifier: Apache-2.0
// Reads a pypto-sim trace.json with two independent real viewers, offline, and says what each
// saw; exit 0 when both read it whole, 1 when a viewer dropped or misread something, 2 on bad
// usage. Run through tools/check_viewers.sh (which installs the packages).
//
//  1. Chrome DevTools' trace engine (the Performance panel's parser, packaged for node): every
//     slice must land in its thread's tree as a root (a slice that seems to start before the
//     previous one on its track ends is nested or dropped there), and every dependency arrow
//     the file announces (metadata.dependency_arrows) must bind to its two slices.
//  2. speedscope in headless Chromium (Debian's chromium, driven by puppeteer-core): the file
//     is opened through its file input as a user would; it must load with no error dialog and
//     no importer warning (speedscope warns when slices on one thread do not nest), and show
//     one profile per thread that has slices.
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const file = process.argv[2];
if (!file || !fs.existsSync(file)) {
  console.error(`check_trace.mjs: ${file ?? '(no file)'}: expected a trace.json written by pypto-sim`);
  process.exit(2);
}
const json = JSON.parse(fs.readFileSync(file, 'utf8'));
const events = json.traceEvents;
const problems = [];
const slices = events.filter(e => e.ph === 'X');
const withoutCat = events.filter(e => e.cat === undefined).length;
if (withoutCat) problems.push(`${withoutCat} events without a cat`);

// 1. DevTools trace engine.
const Trace = await import(path.join(here, 'node_modules/@paulirish/trace_engine/models/trace/trace.js'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const data = model.parsedTrace().data;
const nodes = data.Renderer.entryToNode;
let missing = 0, nested = 0;
for (const e of slices) {
  const n = nodes.get(e);
  if (!n) ++missing;
  else if (n.depth !== 0) ++nested;
}
const announced = json.metadata?.dependency_arrows ?? 0;
const flows = data.Flows.flows.length;
const devtools = {slices: slices.length, in_tree: slices.length - missing, nested, flows, announced};
if (missing) problems.push(`DevTools: ${missing} of ${slices.length} slices not in their thread's tree`);
if (nested) problems.push(`DevTools: ${nested} slices nested under a neighbour (overlap)`);
if (flows !== announced) problems.push(`DevTools: ${flows} dependency arrows bound, file announces ${announced}`);

// 2. speedscope.
const puppeteer = (await import(path.join(here, 'node_modules/puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'))).default;
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const browser = await puppeteer.launch({
  executablePath: chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--allow-file-access-from-files']});
const warnings = [];
let speedscope;
try {
  const page = await browser.newPage();
  // WebGL/driver chatter from the software renderer is not about the file.
  const noise = /WebGL|GL Driver|swiftshader/i;
  page.on('pageerror', e => warnings.push(`page error: ${e}`));
  page.on('console', m => {
    if (['error', 'warn', 'warning'].includes(m.type()) && !noise.test(m.text())) warnings.push(m.text());
  });
  page.on('dialog', async d => { warnings.push(`dialog: ${d.message()}`); await d.dismiss(); });
  await page.goto('file://' + path.join(here, 'node_modules/speedscope/dist/release/index.html'));
  const input = await page.waitForSelector('input[type=file]', {timeout: 30000});
  await input.uploadFile(path.resolve(file));
  const title = `${path.basename(file)} - speedscope`;
  const opened = await page.waitForFunction(t => document.title === t, {timeout: 60000}, title)
      .then(() => true, () => false);
  if (!opened) warnings.push(`speedscope did not open the file (title "${await page.title()}")`);
  // The toolbar names the profile shown and "(i/N)", N the profiles (threads) read.
  const bar = await page.evaluate(() => document.body.innerText);
  const m = bar.match(/\((\d+)\/(\d+)\)/);
  const threads = new Set(slices.map(e => `${e.pid}/${e.tid}`)).size;
  speedscope = {profiles: m ? Number(m[2]) : 0, threads_with_slices: threads, warnings: warnings.length};
  if (!m || Number(m[2]) !== threads) {
    problems.push(`speedscope: ${m ? m[2] : 'no'} profiles, the file has ${threads} threads with slices`);
  }
  for (const w of warnings.slice(0, 5)) problems.push(`speedscope: ${w.slice(0, 300)}`);
  if (warnings.length > 5) problems.push(`speedscope: ... ${warnings.length - 5} more warnings`);
} finally {
  await browser.close();
}

console.log(JSON.stringify({file, devtools, speedscope}));
for (const p of problems) console.log(`  problem: ${p}`);
process.exit(problems.length ? 1 : 0);
