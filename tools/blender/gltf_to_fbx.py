# Convert glTF files to FBX with Blender (run by scripts/make-fbx-test-data.sh):
#   blender --background --factory-startup --python gltf_to_fbx.py -- SRC.glb DST.fbx [SRC DST ...]
# Leaf bones off and curve simplification off, so the FBX keeps the source's joints and a key at
# every frame; Blender bakes animation at whole frames of the scene's rate. Textures embedded
# (the glTF's images are packed in Blender, with no file to name), as the FBX texture tests
# compare them with the glTF's.
import math
import sys

import numpy

# Blender 3.4's glTF importer still uses numpy.bool, which newer numpy (Debian's) removed.
if not hasattr(numpy, "bool"):
    numpy.bool = bool

import bpy  # noqa: E402

args = sys.argv[sys.argv.index("--") + 1:]
if len(args) % 2:
    sys.exit("usage: ... -- SRC DST [SRC DST ...]")
for src, dst in zip(args[0::2], args[1::2]):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=src)
    # Blender's glTF importer puts a key at time t on frame t * fps, and the FBX exporter
    # starts each action's stack at the action's first frame. Starting every action at frame
    # 0 keeps the source's key times (a clip whose first key is at 0.04 s keeps it there).
    # The exporter bakes whole frames up to the range's end: a last key at 2.0833 s lands on
    # frame 49.99999, so the end is rounded up to take it in.
    for action in bpy.data.actions:
        end = math.ceil(action.frame_range[1] - 1e-3)
        action.use_frame_range = True
        action.frame_start = 0
        action.frame_end = end
    bpy.ops.export_scene.fbx(
        filepath=dst,
        add_leaf_bones=False,
        bake_anim=True,
        bake_anim_simplify_factor=0.0,
        path_mode="COPY",
        embed_textures=True,
    )
    print(f"gltf_to_fbx: {src} -> {dst}")
