// The console's first load: from navigation to the cluster list showing a
// row for CLUSTER, in Debian's headless Chromium, RUNS times with a cold
// browser context (no cache) each time. Prints one line of milliseconds per
// run. Usage: node bench/console_load.mjs URL TOKEN CLUSTER RUNS
// (playwright-core comes from test/console/node_modules).
import {createRequire} from 'node:module';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../test/console/package.json'));
const {chromium} = require('playwright-core');

const [url, token, cluster, runs = '10'] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
  headless: true,
});
try {
  for (let i = 0; i < Number(runs); i++) {
    const context = await browser.newContext({viewport: {width: 1280, height: 800}});
    await context.addInitScript(t => sessionStorage.setItem('corral.token', t), token);
    const page = await context.newPage();
    const start = Date.now();
    await page.goto(url + '/#/clusters');
    await page.locator(`[data-testid="cluster-row-${cluster}"]`).waitFor({timeout: 30000});
    console.log(Date.now() - start);
    await context.close();
  }
} finally {
  await browser.close();
}
