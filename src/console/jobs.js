// Jobs tab: the queue (squeue) and the history (sacct, last 7 days), with
// filters, paging, and one job's details.

import {get, clusterPath, query} from './api.js';
import {
  h, setChildren, keyedRows, badge, jobStateKind, formatTime, formatDuration, errorLine, showError,
  field,
} from './dom.js';

const PAGE = 100;
const STATES = ['', 'PENDING', 'RUNNING', 'PENDING,RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED',
  'TIMEOUT', 'NODE_FAIL', 'OUT_OF_MEMORY', 'PREEMPTED'];

// "12" or, for an array task, "12_3".
function jobLabel(j) {
  return j.arrayJobId && j.arrayTaskId !== null && j.arrayTaskId !== undefined
    ? `${j.arrayJobId}_${j.arrayTaskId}` : String(j.id);
}

// GPUs a job holds, from its TRES ("…,gres/gpu=4").
function gpusOf(j) {
  const m = /gres\/gpu(?::[^=,]+)?=(\d+)/.exec(j.tres || '');
  return m ? m[1] : '-';
}

// States of a job that has not ended. squeue reports a running job's
// endTime as when its time limit runs out, so it is not an end yet.
const ACTIVE = ['PENDING', 'RUNNING', 'SUSPENDED', 'COMPLETING', 'CONFIGURING', 'REQUEUED',
  'RESIZING', 'STOPPED', 'SIGNALING'];
const ended = (j) => !ACTIVE.includes(j.state);

// An output path with sbatch's filename patterns (%j, %x, ...) filled in.
function outputPath(j) {
  if (!j.stdout) return '';
  const values = {j: j.id, x: j.name, u: j.user, A: j.arrayJobId || j.id, a: j.arrayTaskId ?? '',
    '%': '%'};
  return j.stdout.replace(/%([jxuAa%])/g, (m, k) => String(values[k]));
}

function elapsed(j) {
  if (!j.startTime) return '-';
  const end = ended(j) && j.endTime ? j.endTime : Math.floor(Date.now() / 1000);
  return formatDuration(end - j.startTime);
}

// One table (queue or history) with its count and paging.
function jobTable(ctx, {title, testid, path, columns}) {
  const tbody = h('tbody');
  const count = h('span', {class: 'muted', testid: `${testid}-count`});
  const prev = h('button', {type: 'button', testid: `${testid}-prev`}, '‹ Previous');
  const next = h('button', {type: 'button', testid: `${testid}-next`}, 'Next ›');
  const error = errorLine(`${testid}-error`);
  const empty = h('p', {class: 'muted', testid: `${testid}-empty`, hidden: true});
  const table = h('table', {class: 'table compact', testid},
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', {}, c.label)))), tbody);
  const el = h('section', {class: 'card'},
    h('div', {class: 'card-head'}, h('h2', {}, title), count, h('span', {class: 'pager'}, prev, next)),
    error, table, empty);
  let offset = 0;
  prev.addEventListener('click', () => { offset = Math.max(0, offset - PAGE); ctx.refreshNow(); });
  next.addEventListener('click', () => { offset += PAGE; ctx.refreshNow(); });

  function row(j) {
    return h('tr', {testid: `job-row-${j.id}`, class: 'clickable', tabindex: 0,
      onclick: () => ctx.navigate(`${ctx.base}/jobs/${j.id}`),
      onkeydown: (e) => { if (e.key === 'Enter') ctx.navigate(`${ctx.base}/jobs/${j.id}`); }},
    columns.map((c) => h('td', {class: c.cls || ''}, c.value(j))));
  }

  async function refresh(filters) {
    try {
      const data = await get(clusterPath(ctx.clusterName, ...path) +
        query({...filters, offset, limit: PAGE}));
      showError(error, null);
      const jobs = data.jobs || [];
      if (jobs.length === 0 && offset > 0 && data.total > 0) {  // Paged past the end.
        offset = Math.max(0, Math.floor((data.total - 1) / PAGE) * PAGE);
        return refresh(filters);
      }
      keyedRows(tbody, jobs, (j) => j.id, row,
        (j) => JSON.stringify(j) + (ended(j) ? '' : elapsed(j)));
      table.hidden = jobs.length === 0;
      empty.hidden = jobs.length > 0;
      empty.textContent = Object.values(filters).some(Boolean) ? 'No jobs match the filter.' : 'No jobs.';
      count.textContent = data.total > jobs.length
        ? `${offset + 1}–${offset + jobs.length} of ${data.total}`
        : `${data.total} job${data.total === 1 ? '' : 's'}`;
      prev.disabled = offset === 0;
      next.disabled = offset + jobs.length >= data.total;
    } catch (e) {
      table.hidden = true;
      count.textContent = '';
      if (e.status === 409) {  // Not Running: Slurm cannot be asked.
        showError(error, null);
        empty.hidden = false;
        empty.textContent = e.message;
        return;
      }
      empty.hidden = true;
      showError(error, e);
      if (e.status === 0) throw e;
    }
  }

  return {el, refresh, reset() { offset = 0; }};
}

export function jobsTab(ctx) {
  const state = h('select', {testid: 'jobs-filter-state'},
    STATES.map((s) => h('option', {value: s}, s ? s.replace(',', ' or ') : 'any state')));
  const user = h('input', {type: 'text', testid: 'jobs-filter-user', placeholder: 'any user', size: 10});
  const partition = h('input', {type: 'text', testid: 'jobs-filter-partition', placeholder: 'any partition',
    size: 12, list: 'jobs-partitions'});
  const partitions = h('datalist', {id: 'jobs-partitions'});
  const q = h('input', {type: 'search', testid: 'jobs-filter-q', placeholder: 'job name or id', size: 16});
  const clear = h('button', {type: 'button', testid: 'jobs-filter-clear'}, 'Clear');

  const columnsCommon = [
    {label: 'Job ID', value: (j) => h('a', {href: `${ctx.base}/jobs/${j.id}`}, jobLabel(j)), cls: 'mono'},
    {label: 'Name', value: (j) => j.name},
    {label: 'User', value: (j) => j.user},
    {label: 'Partition', value: (j) => j.partition},
    {label: 'State', value: (j) => badge(j.state, jobStateKind(j.state), 'job-state')},
  ];
  const queue = jobTable(ctx, {title: 'Queue', testid: 'jobs-queue', path: ['jobs'], columns: [
    ...columnsCommon,
    {label: 'Reason', value: (j) => (j.reason && j.reason !== 'None' ? j.reason : '-')},
    {label: 'Nodes', value: (j) => j.nodes || `(${j.nodeCount})`, cls: 'mono'},
    {label: 'GPUs', value: gpusOf},
    {label: 'Time', value: elapsed, cls: 'nowrap'},
    {label: 'Time limit', value: (j) => j.timeLimit || '-', cls: 'nowrap'},
    {label: 'Submitted', value: (j) => formatTime(j.submitTime), cls: 'nowrap'},
  ]});
  const history = jobTable(ctx, {title: 'History (last 7 days)', testid: 'jobs-history',
    path: ['jobs', 'history'], columns: [
      ...columnsCommon,
      {label: 'Exit code', value: (j) => j.exitCode || '-', cls: 'mono'},
      {label: 'Nodes', value: (j) => j.nodes || '-', cls: 'mono'},
      {label: 'Started', value: (j) => formatTime(j.startTime), cls: 'nowrap'},
      {label: 'Ended', value: (j) => (ended(j) ? formatTime(j.endTime) : '-'), cls: 'nowrap'},
      {label: 'Elapsed', value: elapsed, cls: 'nowrap'},
    ]});
  const detail = h('section', {class: 'card', testid: 'job-detail', hidden: true});

  const el = h('div', {testid: 'tab-panel-jobs'},
    h('form', {class: 'filters', testid: 'jobs-filters', onsubmit: (e) => e.preventDefault()},
      field('State', state), field('User', user), field('Partition', partition), partitions,
      field('Search', q), clear),
    detail, queue.el, history.el);

  let selected = '';
  let partitionsLoaded = false;

  function filters() {
    return {state: state.value, user: user.value.trim(), partition: partition.value.trim(),
      q: q.value.trim()};
  }

  // Filters apply as you type, a moment after the last key.
  let timer = 0;
  const changed = () => {
    clearTimeout(timer);
    timer = setTimeout(() => { queue.reset(); history.reset(); ctx.refreshNow(); }, 300);
  };
  for (const input of [state, user, partition, q]) input.addEventListener('input', changed);
  clear.addEventListener('click', () => {
    state.value = ''; user.value = ''; partition.value = ''; q.value = '';
    changed();
  });

  async function refreshDetail() {
    if (!selected) {
      detail.hidden = true;
      return;
    }
    detail.hidden = false;
    let j;
    try {
      j = await get(clusterPath(ctx.clusterName, 'jobs', selected));
    } catch (e) {
      detail.dataset.sig = '';
      setChildren(detail, h('div', {class: 'card-head'}, h('h2', {}, `Job ${selected}`), closeLink()),
        h('div', {class: 'error-line', testid: 'job-detail-error'}, e.message));
      return;
    }
    const sig = JSON.stringify(j);
    if (detail.dataset.sig === sig) return;
    detail.dataset.sig = sig;
    const rows = [
      ['Job ID', jobLabel(j)], ['Name', j.name], ['User', j.user], ['Partition', j.partition],
      ['State', j.state], ['Reason', j.reason], ['Nodes', `${j.nodes || '-'} (${j.nodeCount} node${j.nodeCount === 1 ? '' : 's'})`],
      ['CPUs', j.cpus], ['TRES', j.tres], ['Time limit', j.timeLimit],
      ['Submitted', formatTime(j.submitTime)], ['Started', formatTime(j.startTime)],
      ended(j) ? ['Ended', formatTime(j.endTime)]
        : ['Time limit ends', j.state === 'RUNNING' && j.timeLimit !== 'UNLIMITED' ? formatTime(j.endTime) : '-'],
      ['Elapsed', elapsed(j)],
      ['Working directory', j.workDir], ['Command', j.command], ['Exit code', j.exitCode],
      ['Output', outputPath(j)],
      ['Read from', j.source === 'history' ? 'accounting (sacct)' : j.source === 'queue' ? 'the queue (squeue)' : j.source],
    ];
    setChildren(detail,
      h('div', {class: 'card-head'}, h('h2', {}, `Job ${jobLabel(j)}: ${j.name}`),
        badge(j.state, jobStateKind(j.state)), closeLink()),
      h('dl', {class: 'details'}, rows.map(([k, v]) => [
        h('dt', {}, k), h('dd', {class: 'wrap', testid: `job-${k.toLowerCase().replace(/ /g, '-')}`},
          v === undefined || v === null || v === '' ? '-' : String(v))])),
      h('p', {class: 'muted'}, `On the login node: scontrol show job ${j.id}; sacct -j ${j.id}`));
  }

  function closeLink() {
    return h('a', {href: `${ctx.base}/jobs`, class: 'button', testid: 'job-detail-close'}, 'Close');
  }

  async function loadPartitions() {
    if (partitionsLoaded) return;
    try {
      const data = await get(clusterPath(ctx.clusterName, 'partitions'));
      setChildren(partitions, (data.partitions || []).map((p) => h('option', {value: p.name})));
      partitionsLoaded = true;
    } catch (e) { /* only a convenience */ }
  }

  async function refresh() {
    const f = filters();
    await Promise.all([queue.refresh(f), history.refresh(f), refreshDetail(), loadPartitions()]);
  }

  function route(item) {
    if ((item || '') === selected) return;
    selected = item || '';
    detail.dataset.sig = '';
    if (ctx.cluster) ctx.refreshNow();
  }

  return {el, refresh, route, destroy() { clearTimeout(timer); }};
}
