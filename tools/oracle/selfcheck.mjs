#!/usr/bin/env node
// Self-check of three_dump.mjs against the shared three.js r187 reference dumps.
//
//   node tools/oracle/selfcheck.mjs [--shared DIR]
//   (default DIR: $SKINVIEW_SHARED, else ../shared beside the repository checkout, found from this
//   script's own location, so it does not depend on the working directory)
//
// For every DIR/oracle_ref/*.json it runs the three_dump.mjs CLI on the named model
// (DIR/models/<Name>/<Name>.glb or DIR/rigs/<name>.glb) with the file's anim and times, then compares:
//   pos_rel  = max |p - p_ref| / (bounding-box diagonal of that mesh entry's reference positions, all times)
//   nrm_abs  = max |n - n_ref| (component-wise; normals are unit vectors)
// Pass: pos_rel <= 1e-6 and nrm_abs <= 1e-5 for every entry, with the same (node, primitive) entries,
// vertex counts, times and normals presence. Exits non-zero on any failure.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const POS_TOL = 1e-6;
const NRM_TOL = 1e-5;

const here = dirname(fileURLToPath(import.meta.url));
let shared = process.env.SKINVIEW_SHARED || join(here, '..', '..', '..', 'shared');
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
	if (args[i] === '--shared' && i + 1 < args.length) shared = args[++i];
	else { process.stderr.write('usage: node selfcheck.mjs [--shared DIR]\n'); process.exit(2); }
}
const refDir = join(shared, 'oracle_ref');
const refs = readdirSync(refDir).filter((f) => f.endsWith('.json')).sort();
if (refs.length === 0) { process.stderr.write(`no reference files in ${refDir}\n`); process.exit(2); }

function findModel(name) {
	const stem = name.replace(/\.(glb|gltf)$/, '');
	for (const p of [join(shared, 'models', stem, name), join(shared, 'rigs', name)]) if (existsSync(p)) return p;
	return null;
}

function compare(out, ref) {
	const problems = [];
	if (out.times.length !== ref.times.length || out.times.some((t, i) => t !== ref.times[i])) problems.push('times differ');
	if (out.meshes.length !== ref.meshes.length) problems.push(`${out.meshes.length} mesh entries, reference ${ref.meshes.length}`);
	let posRel = 0, nrmAbs = 0, verts = 0;
	const byKey = new Map(out.meshes.map((m) => [`${m.node_index}/${m.primitive_index}`, m]));
	for (let k = 0; k < ref.meshes.length; k++) {
		const r = ref.meshes[k];
		const key = `${r.node_index}/${r.primitive_index}`;
		const m = byKey.get(key);
		if (!m) { problems.push(`missing entry node/prim ${key}`); continue; }
		if (out.meshes[k] !== m) problems.push(`entry ${key} out of order`);
		if (m.vertex_count !== r.vertex_count) { problems.push(`${key}: ${m.vertex_count} vertices, reference ${r.vertex_count}`); continue; }
		if (m.checks.order_max_abs_diff_vs_accessor !== 0) problems.push(`${key}: vertex order check ${m.checks.order_max_abs_diff_vs_accessor}`);
		verts += r.vertex_count;
		const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
		for (const P of r.positions_by_time) for (let i = 0; i < P.length; i++) { lo[i % 3] = Math.min(lo[i % 3], P[i]); hi[i % 3] = Math.max(hi[i % 3], P[i]); }
		const diag = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) || 1;
		for (let t = 0; t < r.positions_by_time.length; t++) {
			const P = m.positions_by_time[t], R = r.positions_by_time[t];
			let d = 0;
			for (let i = 0; i < R.length; i++) d = Math.max(d, Math.abs(P[i] - R[i]));
			posRel = Math.max(posRel, d / diag);
		}
		if ((m.normals_by_time === null) !== (r.normals_by_time === null)) { problems.push(`${key}: normals presence differs`); continue; }
		if (r.normals_by_time) {
			for (let t = 0; t < r.normals_by_time.length; t++) {
				const N = m.normals_by_time[t], R = r.normals_by_time[t];
				for (let i = 0; i < R.length; i++) nrmAbs = Math.max(nrmAbs, Math.abs(N[i] - R[i]));
			}
		}
	}
	if (!(posRel <= POS_TOL)) problems.push(`pos_rel ${posRel.toExponential(2)} > ${POS_TOL}`);
	if (!(nrmAbs <= NRM_TOL)) problems.push(`nrm_abs ${nrmAbs.toExponential(2)} > ${NRM_TOL}`);
	return { posRel, nrmAbs, verts, problems };
}

const tmp = mkdtempSync(join(tmpdir(), 'skinview-oracle-'));
const fmt = (x) => (x === 0 ? '0' : x.toExponential(2));
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log(`three_dump selfcheck vs ${refDir} (pos tol ${POS_TOL} of bbox diagonal, normal tol ${NRM_TOL})`);
console.log(`${pad('reference', 40)} ${lpad('entries', 7)} ${lpad('verts', 6)} ${lpad('pos_rel', 9)} ${lpad('nrm_abs', 9)} ${lpad('ms', 6)}  result`);
let failures = 0, worstPos = 0, worstNrm = 0, totalMs = 0;
for (const f of refs) {
	const ref = JSON.parse(readFileSync(join(refDir, f), 'utf8'));
	const model = findModel(ref.model);
	let line;
	if (!model) {
		line = { entries: '-', verts: '-', pos: '-', nrm: '-', ms: '-', problems: [`model ${ref.model} not found`] };
	} else {
		const out = join(tmp, f);
		const cli = [join(here, 'three_dump.mjs'), model, '--anim', ref.anim === null ? 'none' : String(ref.anim)];
		for (const t of ref.times) cli.push('--time', String(t));
		cli.push('--out', out);
		const s = performance.now();
		try {
			execFileSync(process.execPath, cli, { stdio: ['ignore', 'ignore', 'pipe'] });
			const ms = performance.now() - s;
			totalMs += ms;
			const res = compare(JSON.parse(readFileSync(out, 'utf8')), ref);
			worstPos = Math.max(worstPos, res.posRel);
			worstNrm = Math.max(worstNrm, res.nrmAbs);
			line = { entries: ref.meshes.length, verts: res.verts, pos: fmt(res.posRel), nrm: fmt(res.nrmAbs), ms: ms.toFixed(0), problems: res.problems };
		} catch (err) {
			line = { entries: '-', verts: '-', pos: '-', nrm: '-', ms: '-', problems: [`three_dump failed: ${String(err.stderr || err).trim().split('\n').pop()}`] };
		}
	}
	if (line.problems.length) failures++;
	console.log(`${pad(f, 40)} ${lpad(line.entries, 7)} ${lpad(line.verts, 6)} ${lpad(line.pos, 9)} ${lpad(line.nrm, 9)} ${lpad(line.ms, 6)}  ${line.problems.length ? 'FAIL: ' + line.problems.join('; ') : 'ok'}`);
}
rmSync(tmp, { recursive: true, force: true });
console.log(`summary: ${refs.length - failures}/${refs.length} ok, worst pos_rel ${fmt(worstPos)}, worst nrm_abs ${fmt(worstNrm)}, total ${(totalMs / 1000).toFixed(1)} s`);
process.exit(failures ? 1 : 0);
