#!/usr/bin/env node
// Independent skinning/morph oracle for skinview, built on three.js.
//
//   node tools/oracle/three_dump.mjs MODEL.glb --anim N|none --time T [--time T ...] [--out OUT.json]
//
// Loads MODEL with three's GLTFLoader.parse, poses it with an AnimationMixer (clip N, LoopOnce +
// clampWhenFinished so t = duration evaluates the last key instead of wrapping to 0), and writes the
// world-space positions/normals of every (node, primitive) that is skinned or morphed, in glTF node
// then primitive order, vertices in glTF accessor order. Same JSON layout as `skinview dump` and the
// shared test data's oracle_ref/ (../shared beside the checkout, or $SKINVIEW_SHARED). See README.md
// for the conventions.

import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

import {
	AnimationMixer,
	LoopOnce,
	Matrix3,
	Matrix4,
	Mesh,
	REVISION,
	Vector3,
} from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';

// ---------------------------------------------------------------------------------------------
// glTF container handling (independent of three: used for image stripping, the raw-accessor
// vertex-order check and the JOINTS_n/WEIGHTS_n sets that three does not use).

const GLB_MAGIC = 0x46546c67; // 'glTF'
const CHUNK_JSON = 0x4e4f534a;
const CHUNK_BIN = 0x004e4942;

function readGltfContainer(path) {
	const bytes = readFileSync(path);
	const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
	const dv = new DataView(buf);
	if (buf.byteLength >= 12 && dv.getUint32(0, true) === GLB_MAGIC) {
		const version = dv.getUint32(4, true);
		if (version !== 2) throw new Error(`${path}: unsupported GLB version ${version}`);
		const total = dv.getUint32(8, true);
		let off = 12;
		let json = null;
		let bin = null;
		while (off + 8 <= total) {
			const len = dv.getUint32(off, true);
			const type = dv.getUint32(off + 4, true);
			const data = buf.slice(off + 8, off + 8 + len);
			if (type === CHUNK_JSON && json === null) json = JSON.parse(new TextDecoder().decode(data));
			else if (type === CHUNK_BIN && bin === null) bin = data;
			off += 8 + len;
		}
		if (json === null) throw new Error(`${path}: GLB without JSON chunk`);
		if ((json.buffers || []).some((b) => b.uri !== undefined)) throw new Error(`${path}: GLB with external/data-URI buffers is not supported`);
		return { json, bin };
	}
	// .gltf: merge all buffers (data: URIs or files next to the .gltf) into one GLB-style BIN
	// buffer, so that everything below (and GLTFLoader, which in Node cannot fetch files and whose
	// FileLoader needs the DOM's ProgressEvent) goes through the self-contained GLB path.
	const json = JSON.parse(new TextDecoder().decode(bytes));
	const dir = dirname(resolvePath(path));
	const parts = [];
	const bases = [];
	let size = 0;
	for (const def of json.buffers || []) {
		if (def.uri === undefined) throw new Error(`${path}: .gltf buffer without uri`);
		let data;
		const m = /^data:[^,]*?(;base64)?,(.*)$/s.exec(def.uri);
		if (m) data = m[1] ? Buffer.from(m[2], 'base64') : Buffer.from(decodeURIComponent(m[2]), 'latin1');
		else data = readFileSync(resolvePath(dir, decodeURIComponent(def.uri)));
		data = data.subarray(0, def.byteLength);
		size = Math.ceil(size / 8) * 8; // keeps every accessor's alignment
		bases.push(size);
		parts.push([size, data]);
		size += data.length;
	}
	const bin = Buffer.alloc(Math.ceil(size / 4) * 4);
	for (const [off, data] of parts) data.copy(bin, off);
	for (const bv of json.bufferViews || []) {
		bv.byteOffset = (bv.byteOffset || 0) + bases[bv.buffer];
		bv.buffer = 0;
	}
	if (json.buffers && json.buffers.length) json.buffers = [{ byteLength: bin.length }];
	return { json, bin: json.buffers ? bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.length) : null };
}

function bufferBytes(container, index) {
	if (index !== 0 || container.bin === null) throw new Error(`buffer ${index}: only the GLB BIN chunk is supported`);
	return container.bin;
}

const COMPONENTS = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16 };
const COMPONENT_SIZE = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 };

function readComponent(dv, off, ct, normalized) {
	switch (ct) {
		case 5126: return dv.getFloat32(off, true);
		case 5120: { const v = dv.getInt8(off); return normalized ? Math.max(v / 127, -1) : v; }
		case 5121: { const v = dv.getUint8(off); return normalized ? v / 255 : v; }
		case 5122: { const v = dv.getInt16(off, true); return normalized ? Math.max(v / 32767, -1) : v; }
		case 5123: { const v = dv.getUint16(off, true); return normalized ? v / 65535 : v; }
		case 5125: return dv.getUint32(off, true);
		default: throw new Error(`unknown componentType ${ct}`);
	}
}

/** Decodes accessor `index` straight from the file bytes (sparse supported) into a Float64Array. */
export function decodeAccessor(container, index) {
	const json = container.json;
	const acc = json.accessors[index];
	const n = COMPONENTS[acc.type];
	const out = new Float64Array(acc.count * n);
	const norm = acc.normalized === true;
	if (acc.bufferView !== undefined) {
		const bv = json.bufferViews[acc.bufferView];
		const dv = new DataView(bufferBytes(container, bv.buffer));
		const csize = COMPONENT_SIZE[acc.componentType];
		const stride = bv.byteStride || csize * n;
		const base = (bv.byteOffset || 0) + (acc.byteOffset || 0);
		for (let i = 0; i < acc.count; i++) {
			for (let c = 0; c < n; c++) out[i * n + c] = readComponent(dv, base + i * stride + c * csize, acc.componentType, norm);
		}
	}
	if (acc.sparse) {
		const sp = acc.sparse;
		const ibv = json.bufferViews[sp.indices.bufferView];
		const idv = new DataView(bufferBytes(container, ibv.buffer));
		const ibase = (ibv.byteOffset || 0) + (sp.indices.byteOffset || 0);
		const isize = COMPONENT_SIZE[sp.indices.componentType];
		const vbv = json.bufferViews[sp.values.bufferView];
		const vdv = new DataView(bufferBytes(container, vbv.buffer));
		const vbase = (vbv.byteOffset || 0) + (sp.values.byteOffset || 0);
		const csize = COMPONENT_SIZE[acc.componentType];
		for (let s = 0; s < sp.count; s++) {
			const vi = readComponent(idv, ibase + s * isize, sp.indices.componentType, false);
			for (let c = 0; c < n; c++) out[vi * n + c] = readComponent(vdv, vbase + (s * n + c) * csize, acc.componentType, norm);
		}
	}
	return out;
}

// Texture handling: Node has no DOM (no Image, document, createImageBitmap, self.URL), so three cannot
// decode images. Textures never influence vertex positions, so we remove them from the JSON before
// parsing: images/textures/samplers are dropped, every textureInfo ({index: ...}) inside materials is
// deleted, and texture-only extensions are removed from extensionsUsed/extensionsRequired.
// Node/mesh/accessor indices are unchanged. The BIN chunk is passed on untouched.
const TEXTURE_EXTENSIONS = ['KHR_texture_basisu', 'EXT_texture_webp', 'EXT_texture_avif', 'KHR_texture_transform', 'MSFT_texture_dds'];

function stripTextures(json) {
	const stripped = { images: (json.images || []).length, textures: (json.textures || []).length, samplers: (json.samplers || []).length, texture_refs: 0, extensions: [] };
	delete json.images;
	delete json.textures;
	delete json.samplers;
	const walk = (obj) => {
		if (obj === null || typeof obj !== 'object') return;
		for (const key of Object.keys(obj)) {
			const v = obj[key];
			if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.index === 'number') {
				delete obj[key];
				stripped.texture_refs++;
			} else {
				walk(v);
			}
		}
	};
	for (const m of json.materials || []) walk(m);
	for (const list of ['extensionsUsed', 'extensionsRequired']) {
		if (!json[list]) continue;
		for (const e of json[list]) if (TEXTURE_EXTENSIONS.includes(e) && !stripped.extensions.includes(e)) stripped.extensions.push(e);
		json[list] = json[list].filter((e) => !TEXTURE_EXTENSIONS.includes(e));
		if (json[list].length === 0) delete json[list];
	}
	return stripped;
}

function buildGlb(json, bin) {
	let jsonBytes = Buffer.from(JSON.stringify(json), 'utf8');
	const jpad = (4 - (jsonBytes.length % 4)) % 4;
	if (jpad) jsonBytes = Buffer.concat([jsonBytes, Buffer.alloc(jpad, 0x20)]);
	let binBytes = bin ? Buffer.from(bin) : null;
	if (binBytes) {
		const bpad = (4 - (binBytes.length % 4)) % 4;
		if (bpad) binBytes = Buffer.concat([binBytes, Buffer.alloc(bpad, 0)]);
	}
	const total = 12 + 8 + jsonBytes.length + (binBytes ? 8 + binBytes.length : 0);
	const out = Buffer.alloc(total);
	out.writeUInt32LE(GLB_MAGIC, 0);
	out.writeUInt32LE(2, 4);
	out.writeUInt32LE(total, 8);
	out.writeUInt32LE(jsonBytes.length, 12);
	out.writeUInt32LE(CHUNK_JSON, 16);
	jsonBytes.copy(out, 20);
	if (binBytes) {
		const o = 20 + jsonBytes.length;
		out.writeUInt32LE(binBytes.length, o);
		out.writeUInt32LE(CHUNK_BIN, o + 4);
		binBytes.copy(out, o + 8);
	}
	return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength);
}

// ---------------------------------------------------------------------------------------------

function parseWithThree(data, path) {
	const loader = new GLTFLoader();
	return new Promise((resolve, reject) => loader.parse(data, path, resolve, reject));
}

function nodeIndexOf(associations, object) {
	for (let o = object; o; o = o.parent) {
		const a = associations.get(o);
		if (a && a.nodes !== undefined) return a.nodes;
	}
	return undefined;
}

// p' = M p with the affine part only. Vector3.applyMatrix4 would divide by the bottom row . (p, 1),
// which for a blended matrix is sum_k w_k: that would silently renormalise the weights.
function applyAffine(v, m) {
	const e = m.elements;
	const x = v.x, y = v.y, z = v.z;
	v.x = e[0] * x + e[4] * y + e[8] * z + e[12];
	v.y = e[1] * x + e[5] * y + e[9] * z + e[13];
	v.z = e[2] * x + e[6] * y + e[10] * z + e[14];
	return v;
}

function weightSetCount(attributes) {
	let n = 0;
	while (attributes[`WEIGHTS_${n}`] !== undefined && attributes[`JOINTS_${n}`] !== undefined) n++;
	return n;
}

/**
 * @param {object} o
 * @param {string} o.model path to .glb / .gltf
 * @param {number|null} o.anim animation index, or null for none
 * @param {number[]} o.times
 * @param {'auto'|'4'} [o.influences] 'auto': blend all JOINTS_n/WEIGHTS_n sets (default); '4': three's native 4
 */
export async function dump({ model, anim, times, influences = 'auto' }) {
	const warnings = [];
	const t0 = performance.now();

	const container = readGltfContainer(model);
	const json = container.json; // raw JSON (used for metadata and raw accessors)
	const parseJson = JSON.parse(JSON.stringify(json));
	const stripped = stripTextures(parseJson);
	const data = buildGlb(parseJson, container.bin);

	// Capture three's console warnings into the dump instead of stderr noise.
	const origWarn = console.warn;
	console.warn = (...args) => warnings.push(args.map(String).join(' '));
	let gltf;
	try {
		gltf = await parseWithThree(data, pathToFileURL(dirname(resolvePath(model)) + '/').href);
	} finally {
		console.warn = origWarn;
	}
	const t1 = performance.now();

	const parser = gltf.parser;
	const scene = gltf.scene;
	scene.updateMatrixWorld(true);

	// --- collect (node, primitive) entries -------------------------------------------------
	const entries = [];
	scene.traverse((obj) => {
		if (!obj.isMesh) return;
		const assoc = parser.associations.get(obj);
		if (!assoc || assoc.primitives === undefined) return;
		const nodeIndex = nodeIndexOf(parser.associations, obj);
		if (nodeIndex === undefined) { warnings.push(`mesh object ${obj.name} has no glTF node`); return; }
		const nodeDef = json.nodes[nodeIndex];
		const primDef = json.meshes[assoc.meshes].primitives[assoc.primitives];
		const geom = obj.geometry;
		const skinned = obj.isSkinnedMesh === true && obj.skeleton !== undefined && nodeDef.skin !== undefined;
		const targets = primDef.targets || [];
		const morphed = targets.length > 0 && geom.morphAttributes.position !== undefined;
		if (!skinned && !morphed) return;
		entries.push({ obj, nodeIndex, nodeDef, meshIndex: assoc.meshes, primIndex: assoc.primitives, primDef, skinned, targets });
	});
	entries.sort((a, b) => a.nodeIndex - b.nodeIndex || a.primIndex - b.primIndex);

	// Bones that are not under the scene root would not be updated by scene.updateMatrixWorld.
	const bonesOutsideScene = new Set();
	for (const e of entries) {
		if (!e.skinned) continue;
		for (const bone of e.obj.skeleton.bones) {
			let r = bone; while (r.parent) r = r.parent;
			if (r !== scene) bonesOutsideScene.add(bone);
		}
	}
	if (bonesOutsideScene.size) warnings.push(`${bonesOutsideScene.size} joints are not in the scene graph; updated separately`);

	// --- per-entry static data -------------------------------------------------------------
	let maxThreeVsBlend = 0;
	for (const e of entries) {
		const { obj, primDef } = e;
		const geom = obj.geometry;
		const attrs = primDef.attributes;
		e.accessorCount = json.accessors[attrs.POSITION].count;
		e.threeCount = geom.attributes.position.count;
		if (e.accessorCount !== e.threeCount) throw new Error(`node ${e.nodeIndex} prim ${e.primIndex}: three has ${e.threeCount} vertices, accessor ${e.accessorCount}`);
		// Vertex order check: three's position attribute vs the raw POSITION accessor.
		const raw = decodeAccessor(container, attrs.POSITION);
		const pa = geom.attributes.position;
		let od = 0;
		for (let i = 0; i < pa.count; i++) {
			od = Math.max(od, Math.abs(pa.getX(i) - raw[3 * i]), Math.abs(pa.getY(i) - raw[3 * i + 1]), Math.abs(pa.getZ(i) - raw[3 * i + 2]));
		}
		e.orderDiff = od;
		if (od !== 0) warnings.push(`node ${e.nodeIndex} prim ${e.primIndex}: three positions differ from the POSITION accessor by ${od}`);

		e.hasNormals = attrs.NORMAL !== undefined && geom.attributes.normal !== undefined;
		// glTF: a target without POSITION/NORMAL contributes a zero delta. three substitutes the base
		// attribute there (wrong with morphTargetsRelative), so such targets are skipped explicitly.
		e.posTargetOk = e.targets.map((t) => t.POSITION !== undefined);
		e.nrmTargetOk = e.targets.map((t) => t.NORMAL !== undefined);
		e.threeMorphOk = e.posTargetOk.every((x) => x);
		if (!e.threeMorphOk) warnings.push(`node ${e.nodeIndex} prim ${e.primIndex}: some morph targets lack POSITION; morph blended by the oracle (zero delta) instead of three`);

		e.weightSets = e.skinned ? weightSetCount(attrs) : 0;
		e.useBlend = e.skinned && e.weightSets > 1 && influences === 'auto';
		if (e.skinned && e.weightSets > 1 && influences !== 'auto') warnings.push(`node ${e.nodeIndex} prim ${e.primIndex}: ${e.weightSets} weight sets but --influences 4: only JOINTS_0/WEIGHTS_0 used (three native)`);
		if (e.useBlend) {
			// All sets read from the file bytes: three renormalises WEIGHTS_0 in place
			// (SkinnedMesh.normalizeSkinWeights over 4 weights only), so its skinWeight cannot be used here.
			e.joints = [];
			e.weights = [];
			for (let s = 0; s < e.weightSets; s++) {
				e.joints.push(decodeAccessor(container, attrs[`JOINTS_${s}`]));
				e.weights.push(decodeAccessor(container, attrs[`WEIGHTS_${s}`]));
			}
		}
		e.positions = [];
		e.normals = e.hasNormals ? [] : null;
	}

	// --- animation ---------------------------------------------------------------------------
	let clip = null;
	if (anim !== null) {
		clip = gltf.animations[anim];
		if (!clip) throw new Error(`animation ${anim} does not exist (${gltf.animations.length} animations)`);
	}
	const mixer = new AnimationMixer(scene);
	const action = clip ? mixer.clipAction(clip) : null;
	if (action) {
		action.setLoop(LoopOnce, 1);
		action.clampWhenFinished = true;
	}
	const t2 = performance.now();

	// --- evaluate ------------------------------------------------------------------------------
	const v = new Vector3();
	const n = new Vector3();
	const pb = new Vector3();
	const M = new Matrix4();
	const Mw = new Matrix4();
	const L = new Matrix4();
	const NM = new Matrix3();
	const meshProtoGetVertexPosition = Mesh.prototype.getVertexPosition;

	for (const t of times) {
		if (action) {
			action.reset();
			action.play();
			mixer.setTime(t);
		}
		scene.updateMatrixWorld(true);
		for (const bone of bonesOutsideScene) bone.updateWorldMatrix(true, false);

		for (const e of entries) {
			const obj = e.obj;
			const geom = obj.geometry;
			const pos = geom.attributes.position;
			const nrm = e.hasNormals ? geom.attributes.normal : null;
			const mp = geom.morphAttributes.position || [];
			const mn = geom.morphAttributes.normal || [];
			const infl = obj.morphTargetInfluences || [];
			const out = new Array(pos.count * 3);
			const outN = nrm ? new Array(pos.count * 3) : null;

			let boneMats = null;
			if (e.skinned) {
				const sk = obj.skeleton;
				boneMats = sk.bones.map((b, j) => new Matrix4().multiplyMatrices(b.matrixWorld, sk.boneInverses[j]));
				// World = matrixWorld * bindMatrixInverse * sum_k w_k B_k * bindMatrix (three's shader);
				// GLTFLoader binds with identity bindMatrix, and the attached bind mode sets
				// bindMatrixInverse = inverse(matrixWorld), so the mesh node transform cancels (glTF rule).
				L.multiplyMatrices(obj.matrixWorld, obj.bindMatrixInverse);
			}

			for (let i = 0; i < pos.count; i++) {
				// 1. morphed local position
				if (e.threeMorphOk) {
					meshProtoGetVertexPosition.call(obj, i, v); // three: base + sum_t w_t * delta_t
				} else {
					v.fromBufferAttribute(pos, i);
					let dx = 0, dy = 0, dz = 0;
					for (let k = 0; k < mp.length; k++) {
						const w = infl[k] || 0;
						if (w === 0 || !e.posTargetOk[k]) continue;
						dx += w * mp[k].getX(i); dy += w * mp[k].getY(i); dz += w * mp[k].getZ(i);
					}
					v.x += dx; v.y += dy; v.z += dz;
				}
				// 2. morphed local normal
				if (nrm) {
					n.fromBufferAttribute(nrm, i);
					for (let k = 0; k < mn.length; k++) {
						const w = infl[k] || 0;
						if (w === 0 || !e.nrmTargetOk[k]) continue;
						n.x += w * mn[k].getX(i); n.y += w * mn[k].getY(i); n.z += w * mn[k].getZ(i);
					}
				}
				// 3. blended matrix
				if (e.skinned) {
					const me = M.elements;
					me.fill(0);
					const addBone = (j, w) => {
						if (w === 0) return;
						const be = boneMats[j].elements;
						for (let c = 0; c < 16; c++) me[c] += w * be[c];
					};
					if (e.useBlend) {
						for (let s = 0; s < e.weightSets; s++) {
							const J = e.joints[s], W = e.weights[s];
							for (let c = 0; c < 4; c++) addBone(J[4 * i + c], W[4 * i + c]);
						}
					} else {
						const si = geom.attributes.skinIndex, sw = geom.attributes.skinWeight;
						addBone(si.getX(i), sw.getX(i)); addBone(si.getY(i), sw.getY(i));
						addBone(si.getZ(i), sw.getZ(i)); addBone(si.getW(i), sw.getW(i));
					}
					Mw.multiplyMatrices(L, M).multiply(obj.bindMatrix);
				} else {
					Mw.copy(obj.matrixWorld);
				}
				// 4. position
				if (e.skinned && !e.useBlend) {
					applyAffine(pb.copy(v), Mw); // oracle blend, compared with three below
					obj.applyBoneTransform(i, v); // three: SkinnedMesh.getVertexPosition = morph + this
					v.applyMatrix4(obj.matrixWorld);
					maxThreeVsBlend = Math.max(maxThreeVsBlend, Math.abs(v.x - pb.x), Math.abs(v.y - pb.y), Math.abs(v.z - pb.z));
				} else {
					applyAffine(v, Mw);
				}
				out[3 * i] = v.x; out[3 * i + 1] = v.y; out[3 * i + 2] = v.z;
				// 5. normal: inverse-transpose of the upper 3x3 of the same matrix, normalised
				if (nrm) {
					NM.getNormalMatrix(Mw);
					n.applyMatrix3(NM).normalize();
					outN[3 * i] = n.x; outN[3 * i + 1] = n.y; outN[3 * i + 2] = n.z;
				}
			}
			e.positions.push(out);
			if (outN) e.normals.push(outN);
		}
	}
	const t3 = performance.now();

	const round1 = (x) => Math.round(x * 10) / 10;
	return {
		model: basename(model),
		anim,
		anim_name: clip ? clip.name : null,
		duration: clip ? clip.duration : 0,
		times,
		three_revision: REVISION,
		options: { normals: 'invtrans', influences, precision: null },
		conventions: {
			space: 'world (glTF scene root); skinned meshes: sum_k w_k*jointWorld_k*IBM_k*p (skinned-mesh node transform ignored, per spec)',
			vertex_order: 'glTF accessor order of each primitive (verified against the raw POSITION accessor)',
			normals: 'normalize(inverse-transpose(upper3x3(M)) * n_morphed), M = same blended matrix as positions',
		},
		stripped_extensions: stripped.extensions,
		stripped,
		selfcheck: { max_abs_diff_three_vs_blend: maxThreeVsBlend },
		timing_ms: { load: round1(t1 - t0), setup: round1(t2 - t1), evaluate: round1(t3 - t2) },
		warnings,
		meshes: entries.map((e) => ({
			node_index: e.nodeIndex,
			node_name: e.nodeDef.name ?? null,
			mesh_index: e.meshIndex,
			primitive_index: e.primIndex,
			vertex_count: e.accessorCount,
			skin_index: e.skinned ? e.nodeDef.skin : null,
			skinned: e.skinned,
			morph_targets: e.targets.length,
			weight_sets: e.weightSets,
			influences: e.skinned ? (e.useBlend ? 4 * e.weightSets : 4) : 0,
			skinning_path: !e.skinned
				? 'three.Mesh.getVertexPosition(morph) * node world matrix'
				: e.useBlend
					? `oracle-blend-${4 * e.weightSets}-influences(three bone matrices)`
					: 'three.SkinnedMesh.getVertexPosition',
			checks: { accessor_count: e.accessorCount, three_count: e.threeCount, order_max_abs_diff_vs_accessor: e.orderDiff },
			positions_by_time: e.positions,
			normals_by_time: e.normals,
		})),
	};
}

// ---------------------------------------------------------------------------------------------

function usage(msg) {
	if (msg) process.stderr.write(`three_dump: ${msg}\n`);
	process.stderr.write('usage: node three_dump.mjs MODEL.glb --anim N|none --time T [--time T ...] [--out OUT.json] [--influences auto|4]\n');
	process.exit(2);
}

async function main(argv) {
	let model = null, anim, out = null, influences = 'auto';
	const times = [];
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		const val = () => { if (i + 1 >= argv.length) usage(`${a} needs a value`); return argv[++i]; };
		if (a === '--anim') {
			const s = val();
			if (s === 'none') anim = null;
			else { anim = Number(s); if (!Number.isInteger(anim) || anim < 0) usage(`bad --anim ${s}`); }
		} else if (a === '--time') {
			const s = val(); const t = Number(s);
			if (s.trim() === '' || !Number.isFinite(t)) usage(`bad --time ${s}`);
			times.push(t);
		} else if (a === '--out') out = val();
		else if (a === '--influences') { influences = val(); if (influences !== 'auto' && influences !== '4') usage(`bad --influences ${influences}`); }
		else if (a === '-h' || a === '--help') usage();
		else if (a.startsWith('--')) usage(`unknown option ${a}`);
		else if (model === null) model = a;
		else usage(`unexpected argument ${a}`);
	}
	if (model === null) usage('missing MODEL');
	if (anim === undefined) usage('missing --anim N|none');
	if (times.length === 0) times.push(0);
	const result = await dump({ model, anim, times, influences });
	const text = JSON.stringify(result);
	if (out) writeFileSync(out, text);
	else process.stdout.write(text + '\n');
	for (const w of result.warnings) process.stderr.write(`three_dump: warning: ${w}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolvePath(process.argv[1])).href) {
	main(process.argv.slice(2)).catch((err) => {
		process.stderr.write(`three_dump: error: ${err && err.stack ? err.stack : err}\n`);
		process.exit(1);
	});
}
