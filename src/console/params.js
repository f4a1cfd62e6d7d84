// Slurm parameter definitions (GET /api/v1/slurm-params) and the basic
// client-side checks of a value. corrald checks everything again, and
// slurmctld has the last word: a value it refuses is rolled back.

import {get} from './api.js';

let cached = null;

// {slurmConf: [ParamDef…], partition: [ParamDef…]}, read once per page.
export async function loadParams() {
  if (!cached) {
    cached = get('/api/v1/slurm-params').catch((e) => {
      cached = null;
      throw e;
    });
  }
  return cached;
}

// The definition named `name` (case-insensitive, as Slurm reads keys).
export function findParam(defs, name) {
  const lower = name.toLowerCase();
  return defs.find((d) => d.name.toLowerCase() === lower) || null;
}

// What a parameter accepts, in words (for the editor's hint).
export function acceptedForm(def) {
  switch (def.type) {
    case 'int':
      return `an integer from ${def.min} to ${def.max}` + (def.allowUnlimited ? ', or UNLIMITED' : '');
    case 'bool': return 'YES or NO';
    case 'enum': return `one of ${(def.values || []).join(', ')}`;
    case 'enumList': return `a comma-separated list of values from ${(def.values || []).join(', ')}`;
    case 'time': return 'minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED (e.g. 90, 1-00:00:00)';
    case 'path': return 'an absolute path (A-Z a-z 0-9 / . _ + -)';
    case 'options': return 'a comma-separated list of NAME or NAME=VALUE';
    case 'tresWeights': return 'a comma-separated list of TRES=WEIGHT, e.g. CPU=1000,Mem=2000,GRES/gpu=3000';
    case 'nameList': return 'ALL or a comma-separated list of names';
    default: return 'a value';
  }
}

const UNLIMITED = ['UNLIMITED', 'INFINITE'];
const TIME_RE = /^(\d{1,9}-)?\d{1,9}(:\d{1,9}){0,2}$/;
const OPTION_RE = /^[A-Za-z0-9_]+(=[A-Za-z0-9_.:/+-]*)?$/;
const TRES_RE = /^[A-Za-z0-9_/:-]+=-?\d+(\.\d+)?$/;
const NAME_RE = /^[A-Za-z0-9_.-]+$/;

// '' when `value` looks acceptable for `def`, else what is wrong.
export function checkValue(def, value) {
  const v = value.trim();
  const must = `${def.name} must be ${acceptedForm(def)}`;
  if (v === '') return `${def.name} needs a value; use Unset to remove a setting`;
  if (/[\s#]/.test(v) || /[^\x21-\x7e]/.test(v)) {
    return `${def.name}: blanks, line breaks, '#' and non-ASCII characters are not allowed`;
  }
  const items = v.split(',');
  switch (def.type) {
    case 'int': {
      if (def.allowUnlimited && UNLIMITED.includes(v.toUpperCase())) return '';
      if (!/^-?\d+$/.test(v)) return must;
      const n = Number(v);
      return n < def.min || n > def.max ? must : '';
    }
    case 'bool':
      return ['YES', 'NO'].includes(v.toUpperCase()) ? '' : must;
    case 'enum':
      return (def.values || []).some((x) => x.toLowerCase() === v.toLowerCase()) ? '' : must;
    case 'enumList':
      return items.every((i) => (def.values || []).some((x) => x.toLowerCase() === i.toLowerCase()))
        ? duplicates(def, items) : must;
    case 'time':
      return UNLIMITED.includes(v.toUpperCase()) || TIME_RE.test(v) ? '' : must;
    case 'path':
      return v.startsWith('/') && /^[A-Za-z0-9/._+-]+$/.test(v) && !v.includes('..') ? '' : must;
    case 'options':
      return items.every((i) => OPTION_RE.test(i)) ? duplicates(def, items) : must;
    case 'tresWeights':
      return items.every((i) => TRES_RE.test(i)) ? duplicates(def, items) : must;
    case 'nameList':
      return items.every((i) => NAME_RE.test(i)) ? duplicates(def, items) : must;
    default:
      return '';
  }
}

function duplicates(def, items) {
  const seen = new Set();
  for (const i of items) {
    if (i === '') return `${def.name}: the list has an empty entry`;
    const key = i.split('=')[0].toLowerCase();
    if (seen.has(key)) return `${def.name}: "${i}" is given twice`;
    seen.add(key);
  }
  return '';
}

// Parses "Key=Value Key2=Value2" (blanks or line breaks between) into
// {Key: Value} with each key spelled as `defs` spell it. Throws Error with
// what is wrong.
export function parseSettings(text, defs, what) {
  const out = {};
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new Error(`"${word}" is not Key=Value`);
    const key = word.slice(0, eq);
    const def = findParam(defs, key);
    if (!def) throw new Error(`"${key}" is not ${what} corral lets users set`);
    const problem = checkValue(def, word.slice(eq + 1));
    if (problem) throw new Error(problem);
    if (def.name in out) throw new Error(`${def.name} is given twice`);
    out[def.name] = word.slice(eq + 1);
  }
  return out;
}
