// End-to-end test of corrald's web console in a real headless Chromium.
//
// Drives the console the way a user would, against a real corrald that makes
// a real Slurm cluster: sign in, create a cluster from the form, watch it
// reach Running without a reload, open every tab, add a partition, submit a
// job and find it on the Jobs tab, make a Slurm configuration change that
// slurmctld refuses (and see it rolled back) and one it accepts, attach a
// volume, reboot a node, and delete the cluster.
//
// Environment (run.sh sets these):
//   CORRAL_URL          corrald's URL, e.g. http://127.0.0.1:8572
//   CORRAL_TOKEN        an admin's API token
//   CORRAL_DATA_DIR     corrald's data dir; used to run sbatch inside the
//                       login pod (as test/e2e's Harness::podExec does).
//                       Without it the job steps only check the tables render.
//   CORRAL_SSH_PUBKEY   optional: a public key pasted into the create form
//   CORRAL_SCREENSHOTS  optional: directory for screenshots of each page
//   CHROMIUM            optional: the browser (default /usr/bin/chromium)
//
// Run: node --test --test-concurrency=1 console.test.mjs

import {describe, it, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {chromium} from 'playwright-core';

const URL = (process.env.CORRAL_URL || '').replace(/\/$/, '');
const TOKEN = process.env.CORRAL_TOKEN || '';
const DATA_DIR = process.env.CORRAL_DATA_DIR || '';
const SSH_KEY = process.env.CORRAL_SSH_PUBKEY || '';
const SHOTS = process.env.CORRAL_SCREENSHOTS || '';
const CLUSTER = 'web';
const VOLUME = 'web-data';      // attached from the Volumes tab
const DATASET = 'web-ref';      // created there too, and left available

if (!URL || !TOKEN) {
  throw new Error('set CORRAL_URL and CORRAL_TOKEN (test/console/run.sh does)');
}

let browser;
let page;
const pageErrors = [];

// ---- Helpers ----

// Thrown inside until() to stop waiting at once (e.g. the cluster Failed).
class Fatal extends Error {}

// Polls `fn` until it returns a truthy value; fails with `what` and the last
// value seen after `timeout` ms. Other errors fn throws count as "not yet".
async function until(what, fn, {timeout = 30000, interval = 250} = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      if (e instanceof Fatal) {
        await shot(`failed-${what.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`, true);
        throw e;
      }
      last = e.message;
    }
    if (Date.now() > deadline) {
      await shot(`failed-${what.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`, true);
      throw new Error(`timed out after ${timeout} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

const byId = (id) => page.getByTestId(id, {exact: true});

// The text of the first element matching `locator`, or '' when there is none.
async function text(locator) {
  if ((await locator.count()) === 0) return '';
  return (await locator.first().textContent()) || '';
}

async function waitText(what, locator, pattern, opts) {
  return until(what, async () => {
    const t = await text(locator);
    return pattern.test(t) ? t : false;
  }, opts);
}

async function shot(name, failure = false) {
  const dir = failure ? process.env.CORRAL_FAILURE_SHOTS || SHOTS : SHOTS;
  if (!dir || !page) return;
  fs.mkdirSync(dir, {recursive: true});
  await page.screenshot({path: path.join(dir, `${name}.png`), fullPage: !failure});
}

// The REST API, for the few things the console does not do (and to check it).
async function api(method, p, body) {
  const res = await fetch(URL + p, {
    method,
    headers: {Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const t = await res.text();
  return {status: res.status, body: t ? JSON.parse(t) : null};
}

// Runs a shell line in the login pod of the cluster (like Harness::podExec).
function inLoginPod(command) {
  const pid = fs.readFileSync(path.join(DATA_DIR, 'clusters', CLUSTER, 'pods', 'login', 'supervisor', 'pid'),
                              'utf8').trim();
  return execFileSync('nsenter', ['-t', pid, '-U', '-n', '-m', '-u', '-i', '-p', '-C', '-r', '-w', '--',
                                  'sh', '-c', command],
    {encoding: 'utf8', timeout: 60000});
}

async function openTab(id) {
  await byId(`tab-${id}`).click();
  await byId(`tab-panel-${id}`).waitFor();
  await until(`tab ${id} to be active`, async () =>
    (await byId(`tab-${id}`).getAttribute('aria-selected')) === 'true');
}

// Waits until the change banner of the cluster page reports that the change
// whose message matches `message` is `state`.
async function waitChange(message, state, timeout = 180000) {
  return until(`the change ${message} to be ${state}`, async () => {
    const banner = byId('change-status');
    if ((await banner.count()) === 0 || !message.test(await text(banner))) return false;
    const s = await banner.getAttribute('data-state');
    if (s !== 'Pending' && s !== state) throw new Fatal(`change ended ${s}: ${await text(banner)}`);
    return s === state ? text(banner) : false;
  }, {timeout});
}

// ---- The test ----

describe('corral web console', {timeout: 20 * 60 * 1000}, () => {
  before(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
      headless: true,
    });
    const context = await browser.newContext({
      viewport: {width: 1280, height: 800},
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    page = await context.newPage();
    page.setDefaultTimeout(15000);
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/401|404|409|Failed to load resource/.test(m.text())) {
        pageErrors.push(m.text());
      }
    });
  });

  after(async () => {
    if (browser) await browser.close();
  });

  it('serves the console without a token, but not the API', async () => {
    const index = await fetch(`${URL}/`);
    assert.equal(index.status, 200);
    assert.match(await index.text(), /\/console\/app\.js/);
    for (const file of ['app.js', 'style.css']) {
      const res = await fetch(`${URL}/console/${file}`);
      assert.equal(res.status, 200, file);
      assert.match(res.headers.get('content-type') || '', file.endsWith('.js') ? /javascript/ : /css/);
    }
    const clusters = await fetch(`${URL}/api/v1/clusters`);
    assert.equal(clusters.status, 401);
  });

  it('refuses a wrong token and signs in with the right one', async () => {
    await page.goto(`${URL}/`);
    await byId('signin-form').waitFor();
    await shot('signin');
    await byId('signin-token').fill('not-a-token');
    await byId('signin-submit').click();
    await waitText('the sign-in error', byId('signin-error'), /\S/);
    await byId('signin-token').fill(TOKEN);
    await byId('signin-submit').click();
    await byId('page-clusters').waitFor();
    const who = await api('GET', '/api/v1/whoami');
    assert.equal(who.status, 200);
    assert.equal(await text(byId('whoami-user')), who.body.user);
    assert.equal(await byId('whoami-admin').count(), who.body.admin ? 1 : 0);
    assert.equal(await page.evaluate(() => location.hash), '#/clusters');
  });

  it('creates a cluster from the form and shows it Running without a reload', async () => {
    await byId('new-cluster').click();
    await byId('create-form').waitFor();
    // Client-side check first: a name corrald would refuse.
    await byId('create-name').fill('Web_1');
    await byId('create-submit').click();
    await waitText('the name error', byId('create-error'), /invalid cluster name/);

    await byId('create-name').fill(CLUSTER);
    await byId('create-gpu-nodes').fill('2');
    await byId('create-gpus-per-node').fill('2');
    await byId('create-cpu-nodes').fill('0');
    if (SSH_KEY) await byId('create-ssh-keys').fill(SSH_KEY);
    const projects = await byId('create-project').locator('option').allTextContents();
    assert.ok(projects.length >= 1, 'the project list comes from whoami');
    await shot('create-form');

    // Marks this document: a reload would lose the mark.
    await page.evaluate(() => { window.__noReload = true; });
    const started = Date.now();
    await byId('create-submit').click();
    await byId('page-clusters').waitFor();
    const row = byId(`cluster-row-${CLUSTER}`);
    await row.waitFor();
    assert.match(await text(byId('flash')), /being created/);

    // While Creating: a spinner with the phase, and the actions a Creating
    // cluster does not allow are disabled with the reason shown.
    // One snapshot of the row, as it may turn Running at any moment.
    const snap = await row.evaluate((tr) => {
      const q = (id) => tr.querySelector(`[data-testid="${id}"]`);
      const t = (id) => (q(id) ? q(id).textContent : null);
      return {
        status: t('status'), progress: t('progress'),
        terminateDisabled: q('action-terminate').disabled, terminateReason: t('action-terminate-reason'),
        cloneDisabled: q('action-clone').disabled, cloneReason: t('action-clone-reason'),
        deleteDisabled: q('action-delete').disabled,
      };
    });
    if (snap.status === 'Creating') {
      assert.match(snap.progress, /^Creating: /);
      assert.equal(snap.terminateDisabled, true);
      assert.match(snap.terminateReason, /it is Creating; that is allowed only when a cluster is Running/);
      assert.equal(snap.cloneDisabled, true);
      assert.match(snap.cloneReason, /Creating/);
      assert.equal(snap.deleteDisabled, false);
      await shot('cluster-list-creating');
    } else {
      console.log(`cluster ${CLUSTER} was already ${snap.status} when the list showed it`);
    }

    await until('the cluster to be Running', async () => {
      const s = await text(row.getByTestId('status'));
      if (s === 'Failed') throw new Fatal(`the cluster Failed: ${await text(row.getByTestId('reason'))}`);
      return s === 'Running';
    }, {timeout: 300000, interval: 500});
    console.log(`cluster ${CLUSTER} Running after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was not reloaded');
    assert.equal(await row.getByTestId('progress').count(), 0);
    assert.equal(await row.getByTestId('action-terminate').isDisabled(), false);
    assert.equal(await row.getByTestId('action-clone').isDisabled(), false);
    await shot('cluster-list');
  });

  it('shows the overview: login, ssh line, actions, events and charts', async () => {
    await byId(`cluster-row-${CLUSTER}`).getByTestId('cluster-link').click();
    await byId('tab-panel-overview').waitFor();
    assert.equal(await page.evaluate(() => location.hash), `#/clusters/${CLUSTER}`);
    await waitText('the status badge', byId('cluster-status'), /^Running$/);
    const cluster = (await api('GET', `/api/v1/clusters/${CLUSTER}`)).body;
    await waitText('the login address', byId('login-address'), new RegExp(`^${cluster.login.address}$`));
    assert.equal(await text(byId('ssh-command')), `ssh root@${cluster.login.address}`);
    await byId('copy-ssh').click();
    await until('the ssh line in the clipboard', async () =>
      (await page.evaluate(() => navigator.clipboard.readText())) === `ssh root@${cluster.login.address}`);
    for (const action of ['loginRestart', 'reconfigure', 'scale', 'clone', 'terminate', 'delete']) {
      assert.equal(await byId(`action-${action}`).isDisabled(), false, `${action} is allowed when Running`);
    }
    assert.match(await text(byId('detail-revision')), /^1 \(applied: 1\)$/);
    // Clone asks for the new name; cancelled here (one cluster at a time).
    await byId('action-clone').click();
    await byId('dialog').waitFor();
    assert.equal(await byId('clone-name').inputValue(), `${CLUSTER}-2`);
    await byId('dialog-cancel').click();
    await byId('dialog').waitFor({state: 'detached'});
    await waitText('the Running event', byId('events'), /Running/);
    // corrald samples every 10 s; the overview reads metrics every 10 s.
    await until('a node-state chart', async () =>
      (await byId('chart-nodes').locator('svg polygon').count()) > 0, {timeout: 45000});
    assert.match(await text(byId('chart-nodes')), /idle\s*2/);
    // Lines at 0 have no height, so Playwright calls them hidden.
    await byId('chart-queue').locator('svg polyline').first().waitFor({state: 'attached'});
  });

  it('lists the nodes with Slurm name, physical ID, state, health and XIDs', async () => {
    await openTab('nodes');
    for (const node of ['slinky-0', 'slinky-1']) {
      const row = byId(`node-row-${node}`);
      await row.waitFor();
      assert.equal(await text(row.getByTestId('slurm-name')), node);
      assert.match(await text(row.getByTestId('physical-id')), /^corral_node_\d+$/);
      await waitText(`${node} idle`, row.getByTestId('state'), /^idle$/);
      assert.equal(await text(row.getByTestId('health')), 'ok');
    }
    // A simulated hardware XID (through the API; a real GPU would log it)
    // drains slinky-1, and the console shows why.
    const xid = await api('POST', `/api/v1/clusters/${CLUSTER}/nodes/slinky-1/inject-xid`, {code: 79});
    assert.equal(xid.status, 202, JSON.stringify(xid.body));
    const bad = byId('node-row-slinky-1');
    await waitText('the XID health', bad.getByTestId('health'), /XID 79/, {timeout: 60000});
    await waitText('the drain', bad.getByTestId('state'), /drain/, {timeout: 60000});
    assert.match(await text(bad.getByTestId('reason')), /GPU XID 79/);
    await bad.getByTestId('node-link').click();
    await byId('node-detail').waitFor();
    assert.match(await page.evaluate(() => location.hash), /\/nodes\/slinky-1$/);
    await waitText('the XID history', byId('node-xids'), /79.*hardware/);
    await waitText('the node history', byId('node-history'), /GpuXid/);
    await shot('nodes');
    await byId('node-detail-close').click();
    await until('the node detail to close', async () => !(await byId('node-detail').isVisible()));
  });

  it('adds a partition from the Partitions tab', async () => {
    await openTab('partitions');
    await waitText('the partition count', byId('partition-count'), /^0 of 20 user partitions$/);
    const all = byId('partition-row-all');
    assert.equal(await text(all.getByTestId('managed-by')), 'corral');
    assert.match(await text(all.getByTestId('read-only')), /read-only/);
    assert.equal(await all.getByTestId('partition-delete').count(), 0);

    // Checked before it is sent: an option users may not set.
    await byId('partition-name').fill('short');
    await byId('partition-nodes').fill('slinky-[0-1]');
    await byId('partition-options').fill('Foo=1');
    await byId('partition-submit').click();
    await waitText('the option error', byId('partition-error'), /Foo/);

    await byId('partition-options').fill('MaxTime=30');
    await byId('partition-submit').click();
    const row = byId('partition-row-short');
    await row.waitFor();
    assert.equal(await text(row.getByTestId('managed-by')), 'user');
    assert.equal(await text(row.getByTestId('nodes')), 'slinky-[0-1]');
    assert.equal(await text(row.getByTestId('options')), 'MaxTime=30');
    await waitText('the partition count', byId('partition-count'), /^1 of 20 user partitions$/);
    assert.equal(await row.getByTestId('partition-delete').isDisabled(), false);
    await waitChange(/create partition short/, 'Applied');
    await shot('partitions');

    // Edit replaces it (PUT): the form starts from the current values.
    await row.getByTestId('partition-edit').click();
    assert.equal(await byId('partition-name').inputValue(), 'short');
    assert.equal(await byId('partition-options').inputValue(), 'MaxTime=30');
    await byId('partition-options').fill('MaxTime=30\nDefaultTime=10');
    await byId('partition-submit').click();
    await waitText('the new options', row.getByTestId('options'), /DefaultTime=10/);
    await waitChange(/update partition short/, 'Applied');
  });

  it('lists jobs in the queue and the history, filtered, with details', async () => {
    await openTab('jobs');
    await byId('jobs-queue-count').waitFor();
    if (!DATA_DIR) {
      await waitText('the queue', byId('jobs-queue-count'), /job/);
      await shot('jobs');
      return;
    }
    // One job that finishes at once (history) and one that waits (queue).
    const quick = inLoginPod("cd /shared && sbatch --parsable -J console-quick --wrap='hostname'").trim();
    const long = inLoginPod("cd /shared && sbatch --parsable -p short -t 5 --gres=gpu:1 -J console-long -o /shared/%x-%j.out --wrap='sleep 300'").trim();
    assert.match(long, /^\d+$/);
    const queueRow = byId('jobs-queue').getByTestId(`job-row-${long}`);
    await queueRow.waitFor({timeout: 30000});
    assert.match(await text(queueRow), /console-long/);
    await waitText('the job to run', queueRow.getByTestId('job-state'), /^RUNNING$/);
    await waitText('its GPU', queueRow.locator('td').nth(7), /^1$/);
    await waitText('the finished job in the history', byId('jobs-history'), new RegExp(`console-quick`),
      {timeout: 60000});

    // Filters go to corrald; a search that matches nothing empties both tables.
    await byId('jobs-filter-q').fill('no-such-job');
    await until('the filtered queue to be empty', async () => (await byId('jobs-queue-empty').isVisible()));
    await byId('jobs-filter-q').fill('console-long');
    await queueRow.waitFor();
    await byId('jobs-filter-state').selectOption('RUNNING');
    await byId('jobs-filter-partition').fill('short');
    await queueRow.waitFor();
    assert.equal(await byId('jobs-history').getByTestId(`job-row-${quick}`).count(), 0);
    await byId('jobs-filter-clear').click();
    await byId('jobs-history').getByTestId(`job-row-${quick}`).waitFor({timeout: 10000});

    await queueRow.click();
    await byId('job-detail').waitFor();
    assert.match(await page.evaluate(() => location.hash), new RegExp(`/jobs/${long}$`));
    await waitText('the job details', byId('job-detail'), /console-long/);
    assert.equal(await text(byId('job-partition')), 'short');
    assert.match(await text(byId('job-time-limit')), /^(00:)?0?5:00$/);
    // sbatch's %x and %j filled in.
    assert.equal(await text(byId('job-output')), `/shared/console-long-${long}.out`);
    await shot('jobs');
    await byId('job-detail-close').click();
  });

  it('refuses to delete a partition with jobs, and says why', async (t) => {
    if (!DATA_DIR) return t.skip('needs CORRAL_DATA_DIR to submit a job');
    await openTab('partitions');
    await byId('partition-row-short').getByTestId('partition-delete').click();
    await byId('dialog-confirm').click();
    // corrald answers 409; the console offers the forced delete instead.
    await waitText('the jobs message', byId('partition-jobs'), /pending or running jobs/);
    assert.equal(await text(byId('dialog-confirm')), 'Delete anyway');
    await byId('dialog-cancel').click();
    await byId('dialog').waitFor({state: 'detached'});
    await byId('partition-row-short').waitFor();
    inLoginPod('scancel -n console-long');
  });

  it('attaches a volume from the Volumes tab', async () => {
    await openTab('volumes');
    await byId('volumes-attached-empty').waitFor();
    await byId('volume-new-name').fill(VOLUME);
    await byId('volume-new-type').selectOption('pfs');
    await byId('volume-create').click();
    const available = byId(`volume-available-${VOLUME}`);
    await available.waitFor();
    assert.equal(await available.getByTestId('volume-path').inputValue(), '/pfs');
    await available.getByTestId('volume-attach').click();
    const attached = byId(`volume-attached-${VOLUME}`);
    await attached.waitFor({timeout: 30000});
    assert.match(await text(attached), /\/pfs/);
    await waitChange(/attach volume web-data at \/pfs/, 'Applied');
    assert.equal(await available.count(), 0);
    // A dataset volume, left available.
    await byId('volume-new-name').fill(DATASET);
    await byId('volume-new-type').selectOption('dataset');
    await byId('volume-create').click();
    const dataset = byId(`volume-available-${DATASET}`);
    await dataset.waitFor();
    assert.equal(await dataset.getByTestId('volume-path').inputValue(), `/datasets/${DATASET}`);
    await shot('volumes');

    // Detach puts it back among the available ones.
    await attached.getByTestId('volume-detach').click();
    await byId('dialog-confirm').click();
    await available.waitFor({timeout: 30000});
    await waitChange(/detach volume web-data/, 'Applied');
    assert.equal(await attached.count(), 0);
  });

  it('shows a configuration slurmctld refuses as rolled back', async () => {
    await openTab('config');
    await byId('config-editor').waitFor();
    // Basic validation in the browser: not an integer.
    await byId('config-param').fill('MinJobAge');
    await waitText('the parameter help', byId('config-param-info'), /MinJobAge \(int\)/);
    await byId('config-value').fill('soon');
    await byId('config-add-set').click();
    await waitText('the value error', byId('config-editor-error'), /MinJobAge must be an integer/);
    assert.equal(await byId('config-apply').isDisabled(), true);

    // Both values pass validation, but slurmctld refuses a TRES weight for a
    // GRES that does not exist.
    await byId('config-param').fill('PriorityType');
    await byId('config-value').fill('priority/multifactor');
    await byId('config-add-set').click();
    await byId('config-param').fill('PriorityWeightTRES');
    await byId('config-value').fill('GRES/foo=5');
    await byId('config-add-set').click();
    await byId('pending-PriorityType').waitFor();
    await byId('pending-PriorityWeightTRES').waitFor();
    assert.match(await text(byId('config-apply-reason')), /preview/);

    await byId('config-preview').click();
    await waitText('the diff', byId('config-diff'), /\+PriorityWeightTRES=GRES\/foo=5/);
    assert.match(await text(byId('config-diff')), /\+PriorityType=priority\/multifactor/);
    assert.match(await text(byId('config-restarts')), /restart/);
    await shot('config-diff');
    assert.equal(await byId('config-apply').isDisabled(), false);
    await byId('config-apply').click();

    const result = byId('config-result');
    await until('the change to fail', async () => {
      if (!(await result.count())) return false;
      const s = await result.getAttribute('data-state');
      if (s === 'Applied') throw new Fatal('slurmctld accepted a configuration it should refuse');
      return s === 'Failed';
    }, {timeout: 180000});
    assert.match(await text(result), /failed and was rolled back/);
    assert.match(await text(byId('config-result-error')), /slurmctld/);
    await waitText('the restored revision', byId('config-result-rollback'), /roll back to revision \d+ .* is Applied/,
      {timeout: 60000});
    await waitText('the failed revision', byId('revisions'), /Failed/);
    assert.equal(await byId('config-row-PriorityWeightTRES').count(), 0, 'the setting was rolled back');
    await shot('config-rollback');
    // After a reload the cluster's reason still says what was rolled back.
    await page.reload();
    await waitText('the rollback reason', byId('cluster-reason'), /failed and was rolled back/);
    await byId('config-editor').waitFor();
  });

  it('applies a valid configuration change', async () => {
    await byId('config-param').fill('MinJobAge');
    await byId('config-value').fill('200');
    await byId('config-add-set').click();
    await byId('config-preview').click();
    await waitText('the diff', byId('config-diff'), /\+MinJobAge=200/);
    await byId('config-apply').click();
    const result = byId('config-result');
    await until('the change to be applied', async () => {
      if (!(await result.count()) || !/MinJobAge=200/.test(await text(result))) return false;
      const s = await result.getAttribute('data-state');
      if (s === 'Failed') throw new Fatal(await text(result));
      return s === 'Applied';
    }, {timeout: 180000});
    await waitText('MinJobAge in the settings', byId('config-row-MinJobAge').getByTestId('value'), /^200$/);
    // Everything slurm.conf says, with who set it.
    await byId('config-effective').locator('summary').click();
    await waitText('MinJobAge in effect, set by you', byId('config-effective-MinJobAge'), /MinJobAge\s*200\s*you/);
    await waitText('a default of corral\'s', byId('config-effective-SelectType'), /select\/cons_tres\s*corral/);
    await shot('config');
  });

  it('reboots the drained node from the Nodes tab and sees it come back', async () => {
    await openTab('nodes');
    const row = byId('node-row-slinky-1');
    await row.waitFor();
    await row.getByTestId('reboot').click();
    await byId('dialog').waitFor();
    assert.match(await text(byId('dialog')), /Reboot corral_node_\d+ \(slinky-1\)/);
    await byId('dialog-confirm').click();
    await waitChange(/reboot node slinky-1/, 'Applied');
    // Back, and no longer drained.
    await waitText('slinky-1 idle again', row.getByTestId('state'), /^idle$/, {timeout: 60000});
    assert.equal(await text(row.getByTestId('reason')), '-');
    const node = (await api('GET', `/api/v1/clusters/${CLUSTER}/nodes/slinky-1`)).body;
    assert.equal(node.reboots, 1);
    await waitText('the reboot count', row.locator('td').nth(8), /^1$/);
  });

  it('restarts the login service from the overview', async () => {
    await openTab('overview');
    await byId('action-loginRestart').click();
    await byId('dialog').waitFor();
    await byId('dialog-confirm').click();
    await waitChange(/login/, 'Applied');
    await waitText('the login address', byId('login-address'), /^\d+\.\d+\.\d+\.\d+$/);
    // By now the charts have the drained node and the job of the steps before.
    await waitText('events of the steps before', byId('events'), /GpuXid/);
    await shot('overview');
  });

  it('sends a user whose token stops working back to sign in', async () => {
    await page.evaluate(() => sessionStorage.setItem('corral.token', 'revoked-token'));
    await byId('signin-message').waitFor({timeout: 10000});
    assert.match(await text(byId('signin-message')), /sign in again/i);
    await byId('signin-token').fill(TOKEN);
    await byId('signin-submit').click();
    await byId('page-cluster').waitFor();
  });

  it('deletes the cluster from the overview and sees it leave the list', async () => {
    await openTab('overview');
    await byId('action-delete').click();
    await byId('dialog').waitFor();
    await byId('dialog-confirm').click();
    await byId('page-clusters').waitFor();
    assert.match(await text(byId('flash')), /being deleted/);
    const row = byId(`cluster-row-${CLUSTER}`);
    // Deleting takes seconds; when the list catches it, it shows the phase.
    if ((await text(row.getByTestId('status'))) === 'Deleting') {
      const progress = await text(row.getByTestId('progress'));
      if (progress) assert.match(progress, /^Deleting: /);
    }
    await until('the cluster to leave the list', async () =>
      (await api('GET', `/api/v1/clusters/${CLUSTER}`)).status === 404 &&
      (await row.count()) === 0 && (await byId('cluster-list-empty').isVisible()), {timeout: 180000});
    for (const name of [VOLUME, DATASET]) {
      const vol = await api('DELETE', `/api/v1/volumes/${name}`);
      assert.equal(vol.status, 200, JSON.stringify(vol.body));
    }
  });

  it('had no script errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
