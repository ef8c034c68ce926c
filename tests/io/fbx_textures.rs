//! FBX base colour textures, from ASCII FBX files written here: a quad with two UV sets, a
//! material whose `DiffuseColor` is connected to a `Texture`, and the texture's `Video`
//! holding the image (base64 `Content`, as an ASCII FBX embeds it) or naming a file beside
//! the model. The image is a PNG of pixels chosen here. Also: what cannot be found or decoded
//! is a warning naming the texture and its file (the model loads, untextured); nothing
//! outside the model's folder is read; and Blender's export of CesiumMan carries the glTF's
//! own texture.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // test code

use std::path::{Path, PathBuf};

use crate::common;

use skinview::image::Rgba8;
use skinview::io::ModelSource;
use skinview::scene::{Scene, Wrap};

/// A 3x2 image, every pixel different (sRGB bytes; alpha too).
fn image() -> Rgba8 {
    Rgba8 {
        width: 3,
        height: 2,
        pixels: vec![
            255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, //
            10, 20, 30, 255, 200, 100, 50, 128, 1, 2, 3, 4,
        ],
    }
}

fn png() -> Vec<u8> {
    skinview::io::png::encode(&image(), &[]).unwrap()
}

/// The quad's UVs per corner in its first set, `UVMap`, and its second, `Other` (FBX's V up).
const UV_MAP: [[f64; 2]; 4] = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
const UV_OTHER: [[f64; 2]; 4] = [[0.25, 0.5], [0.75, 0.5], [0.75, 0.125], [0.25, 0.125]];

/// A textured quad as an ASCII FBX 7.4 file.
struct TexturedQuad {
    /// The image embedded in the `Video` (`None`: no `Content`).
    content: Option<Vec<u8>>,
    /// The file the texture and video name (`RelativeFilename`).
    relative_filename: String,
    /// The UV set the texture names (`UVSet`).
    uv_set: String,
}

impl TexturedQuad {
    fn embedded(bytes: Vec<u8>) -> TexturedQuad {
        TexturedQuad {
            content: Some(bytes),
            relative_filename: "skin.png".into(),
            uv_set: "Other".into(),
        }
    }

    fn external(relative_filename: &str) -> TexturedQuad {
        TexturedQuad {
            content: None,
            relative_filename: relative_filename.into(),
            uv_set: "UVMap".into(),
        }
    }

    fn text(&self) -> String {
        let uv_layer = |index: usize, name: &str, uvs: &[[f64; 2]; 4]| {
            let values: Vec<String> = uvs.iter().flatten().map(|x| x.to_string()).collect();
            format!(
                "\t\tLayerElementUV: {index} {{\n\t\t\tVersion: 101\n\t\t\tName: \"{name}\"\n\
                 \t\t\tMappingInformationType: \"ByPolygonVertex\"\n\
                 \t\t\tReferenceInformationType: \"IndexToDirect\"\n\
                 \t\t\tUV: *8 {{\n\t\t\t\ta: {}\n\t\t\t}}\n\
                 \t\t\tUVIndex: *4 {{\n\t\t\t\ta: 0,1,2,3\n\t\t\t}}\n\t\t}}\n",
                values.join(",")
            )
        };
        let content = match &self.content {
            Some(bytes) => format!("\t\tContent: , \"{}\"\n", base64::encode(bytes)),
            None => String::new(),
        };
        let file = &self.relative_filename;
        let absolute = format!("C:\\\\Users\\\\artist\\\\maps\\\\{}", bare(file));
        format!(
            "; FBX 7.4.0 project file\n\
FBXHeaderExtension:  {{\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 7400\n\tCreator: \"skinview tests\"\n}}\n\
GlobalSettings:  {{\n\tVersion: 1000\n\tProperties70:  {{\n\
\t\tP: \"UpAxis\", \"int\", \"Integer\", \"\",1\n\
\t\tP: \"UnitScaleFactor\", \"double\", \"Number\", \"\",100\n\
\t}}\n}}\n\
Objects:  {{\n\
\tGeometry: 100, \"Geometry::Quad\", \"Mesh\" {{\n\
\t\tVertices: *12 {{\n\t\t\ta: 0,0,0,1,0,0,1,1,0,0,1,0\n\t\t}}\n\
\t\tPolygonVertexIndex: *4 {{\n\t\t\ta: 0,1,2,-4\n\t\t}}\n\
\t\tGeometryVersion: 124\n\
{uv0}{uv1}\
\t\tLayerElementMaterial: 0 {{\n\t\t\tVersion: 101\n\t\t\tName: \"\"\n\
\t\t\tMappingInformationType: \"AllSame\"\n\t\t\tReferenceInformationType: \"IndexToDirect\"\n\
\t\t\tMaterials: *1 {{\n\t\t\t\ta: 0\n\t\t\t}}\n\t\t}}\n\
\t\tLayer: 0 {{\n\t\t\tVersion: 100\n\
\t\t\tLayerElement:  {{\n\t\t\t\tType: \"LayerElementUV\"\n\t\t\t\tTypedIndex: 0\n\t\t\t}}\n\
\t\t\tLayerElement:  {{\n\t\t\t\tType: \"LayerElementMaterial\"\n\t\t\t\tTypedIndex: 0\n\t\t\t}}\n\
\t\t}}\n\
\t\tLayer: 1 {{\n\t\t\tVersion: 100\n\
\t\t\tLayerElement:  {{\n\t\t\t\tType: \"LayerElementUV\"\n\t\t\t\tTypedIndex: 1\n\t\t\t}}\n\
\t\t}}\n\
\t}}\n\
\tModel: 200, \"Model::Quad\", \"Mesh\" {{\n\t\tVersion: 232\n\t}}\n\
\tMaterial: 300, \"Material::Skin\", \"\" {{\n\t\tVersion: 102\n\t\tShadingModel: \"lambert\"\n\
\t\tProperties70:  {{\n\
\t\t\tP: \"DiffuseColor\", \"Color\", \"\", \"A\",0.5,0.25,1\n\
\t\t\tP: \"DiffuseFactor\", \"Number\", \"\", \"A\",0.5\n\
\t\t}}\n\t}}\n\
\tTexture: 400, \"Texture::SkinTex\", \"\" {{\n\t\tType: \"TextureVideoClip\"\n\t\tVersion: 202\n\
\t\tTextureName: \"Texture::SkinTex\"\n\
\t\tProperties70:  {{\n\
\t\t\tP: \"UVSet\", \"KString\", \"\", \"\", \"{uv_set}\"\n\
\t\t\tP: \"WrapModeU\", \"enum\", \"\", \"\",1\n\
\t\t}}\n\
\t\tMedia: \"Video::SkinImage\"\n\t\tFileName: \"{absolute}\"\n\t\tRelativeFilename: \"{file}\"\n\
\t}}\n\
\tVideo: 500, \"Video::SkinImage\", \"Clip\" {{\n\t\tType: \"Clip\"\n\
\t\tFilename: \"{absolute}\"\n\t\tRelativeFilename: \"{file}\"\n{content}\
\t}}\n\
}}\n\
Connections:  {{\n\
\tC: \"OO\",200,0\n\tC: \"OO\",100,200\n\tC: \"OO\",300,200\n\
\tC: \"OP\",400,300, \"DiffuseColor\"\n\tC: \"OO\",500,400\n\
}}\n",
            uv0 = uv_layer(0, "UVMap", &UV_MAP),
            uv1 = uv_layer(1, "Other", &UV_OTHER),
            uv_set = self.uv_set,
        )
    }
}

/// The last component of a `/`- or `\`-separated path.
fn bare(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap()
}

/// The notes of `scene`'s report, as `field: message`.
fn notes(scene: &Scene) -> Vec<String> {
    scene
        .report
        .notes
        .iter()
        .map(|n| format!("{}: {}", n.field, n.message))
        .collect()
}

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "skinview-fbx-textures-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn load(path: &Path) -> skinview::io::Model {
    ModelSource::File(path.to_path_buf()).load().unwrap()
}

/// The quad's one primitive.
fn quad(scene: &Scene) -> &skinview::scene::Primitive {
    assert_eq!(scene.meshes.len(), 1);
    assert_eq!(scene.meshes[0].primitives.len(), 1);
    &scene.meshes[0].primitives[0]
}

/// The UVs the quad's vertices should read: `set`'s, V flipped to glTF's (down the image),
/// as a sorted list (the importer orders vertices its own way).
fn expected_uvs(set: &[[f64; 2]; 4]) -> Vec<[f32; 2]> {
    let mut uvs: Vec<[f32; 2]> = set
        .iter()
        .map(|[u, v]| [*u as f32, 1.0 - *v as f32])
        .collect();
    uvs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    uvs
}

fn uvs_of(p: &skinview::scene::Primitive) -> Vec<[f32; 2]> {
    let mut uvs: Vec<[f32; 2]> = p.uvs.as_ref().unwrap().iter().map(|t| [t.x, t.y]).collect();
    uvs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    uvs
}

#[test]
fn an_embedded_texture_is_decoded_and_read_with_its_uv_set() {
    let text = TexturedQuad::embedded(png()).text();
    let scene = skinview::io::fbx::import_slice(text.as_bytes(), "quad.fbx").unwrap();
    assert!(scene.report.notes.is_empty(), "{:?}", notes(&scene));
    assert_eq!(scene.textures.len(), 1);
    let t = &scene.textures[0];
    assert_eq!(t.image, image(), "the PNG's pixels and size");
    assert_eq!(t.name.as_deref(), Some("SkinImage"), "the Video's name");
    // WrapModeU 1 is clamp; V keeps FBX's default, repeat.
    assert_eq!(t.wrap, [Wrap::ClampToEdge, Wrap::Repeat]);
    let p = quad(&scene);
    assert_eq!(p.base_color_texture, Some(0));
    assert_eq!(
        uvs_of(p),
        expected_uvs(&UV_OTHER),
        "read with the set it names"
    );
    // The texture replaces DiffuseColor; DiffuseFactor still scales it.
    assert_eq!(p.base_color, [0.5, 0.5, 0.5, 1.0]);

    // `info` lists it and the draw that uses it.
    let info = skinview::info::InfoReport::of(&scene);
    assert_eq!(info.textures.len(), 1);
    assert_eq!((info.textures[0].width, info.textures[0].height), (3, 2));
    assert_eq!(info.draws[0].texture, Some(0));
    let words = info.to_string();
    assert!(
        words.contains("texture 0 \"SkinImage\": 3 x 2 pixels"),
        "{words}"
    );
    assert!(words.contains("UVs yes, texture 0"), "{words}");
}

#[test]
fn a_texture_file_beside_the_fbx_is_read_by_its_relative_then_bare_name() {
    let dir = folder("external");
    std::fs::create_dir_all(dir.join("maps")).unwrap();
    std::fs::write(dir.join("maps/skin.png"), png()).unwrap();
    std::fs::write(dir.join("bare.png"), png()).unwrap();
    // The relative name, then (the file moved beside the model) the bare name; each names
    // also an absolute Windows path that is never followed.
    for (relative, found) in [
        ("maps/skin.png", "maps/skin.png"),
        ("maps\\skin.png", "maps/skin.png"),
        ("textures\\bare.png", "bare.png"),
    ] {
        let fbx = dir.join("quad.fbx");
        std::fs::write(&fbx, TexturedQuad::external(relative).text()).unwrap();
        let model = load(&fbx);
        let scene = &model.scene;
        assert!(
            scene.report.notes.is_empty(),
            "{relative}: {:?}",
            notes(scene)
        );
        assert_eq!(scene.textures.len(), 1, "{relative}");
        assert_eq!(scene.textures[0].image, image(), "{relative}");
        let p = quad(scene);
        assert_eq!(p.base_color_texture, Some(0), "{relative}");
        assert_eq!(uvs_of(p), expected_uvs(&UV_MAP), "{relative}");
        let read = dir.join(found).canonicalize().unwrap();
        assert!(
            model.files.contains(&read),
            "{relative}: {} not among the files read {:?}",
            read.display(),
            model.files
        );
    }
}

/// A texture that cannot be had: the model loads untextured (its material's own colour),
/// with one warning naming the texture and the file.
fn assert_untextured(scene: &Scene, says: &[&str]) {
    assert!(scene.textures.is_empty());
    let p = quad(scene);
    assert_eq!(p.base_color_texture, None);
    assert_eq!(
        p.base_color,
        [0.25, 0.125, 0.5, 1.0],
        "DiffuseColor × factor"
    );
    let notes = notes(scene);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(scene.report.notes.iter().all(|n| !n.repaired), "{notes:?}");
    let note = &notes[0];
    assert!(note.starts_with("Texture \"SkinTex\": "), "{note}");
    for word in says {
        assert!(note.contains(word), "{note}: does not say {word:?}");
    }
    assert!(note.ends_with("drawn untextured"), "{note}");
}

#[test]
fn a_missing_file_or_a_broken_image_is_a_warning_not_an_error() {
    let dir = folder("broken");
    // No such file, under either name.
    let fbx = dir.join("quad.fbx");
    std::fs::write(&fbx, TexturedQuad::external("maps/gone.png").text()).unwrap();
    assert_untextured(
        &load(&fbx).scene,
        &[
            "\"maps/gone.png\" cannot be read beside the model",
            "\"gone.png\"",
        ],
    );

    // An embedded image that is not one.
    let text = TexturedQuad::embedded(b"not an image at all".to_vec()).text();
    let scene = skinview::io::fbx::import_slice(text.as_bytes(), "quad.fbx").unwrap();
    assert_untextured(&scene, &["embedded", "skin.png", "cannot decode"]);

    // A PNG cut short.
    let png = png();
    let text = TexturedQuad::embedded(png[..png.len() / 2].to_vec()).text();
    let scene = skinview::io::fbx::import_slice(text.as_bytes(), "quad.fbx").unwrap();
    assert_untextured(&scene, &["embedded", "skin.png", "cannot decode"]);

    // A file that is a folder.
    std::fs::create_dir_all(dir.join("folder.png")).unwrap();
    std::fs::write(&fbx, TexturedQuad::external("folder.png").text()).unwrap();
    assert_untextured(&load(&fbx).scene, &["folder.png", "not a regular file"]);

    // FBX bytes with no file around them: a texture file is not looked for.
    let text = TexturedQuad::external("maps/skin.png").text();
    let scene = skinview::io::fbx::import_slice(text.as_bytes(), "quad.fbx").unwrap();
    assert_untextured(&scene, &["maps/skin.png", "not read"]);
}

/// Texture files are read by glTF's rules for external images: never outside the model's
/// folder (by `..` or by the absolute path the file also stores) unless allowed.
#[test]
fn a_texture_outside_the_models_folder_is_not_read() {
    let dir = folder("outside");
    std::fs::write(dir.join("secret.png"), png()).unwrap();
    std::fs::create_dir_all(dir.join("model")).unwrap();
    let fbx = dir.join("model/quad.fbx");
    std::fs::write(&fbx, TexturedQuad::external("../secret.png").text()).unwrap();
    let model = load(&fbx);
    assert_untextured(
        &model.scene,
        &["../secret.png", "outside the model's folder"],
    );
    assert_eq!(model.files.len(), 1, "only the model: {:?}", model.files);

    // Allowed, as a glTF's external URIs are.
    let options = skinview::io::files::ImportOptions {
        allow_external_uris: true,
    };
    let model = ModelSource::File(fbx.clone()).load_with(options).unwrap();
    assert_eq!(model.scene.textures.len(), 1, "{:?}", notes(&model.scene));
    assert_eq!(model.scene.textures[0].image, image());
}

/// Blender's FBX export of CesiumMan (scripts/make-fbx-test-data.sh embeds the textures) draws
/// with the very pixels of the glTF's texture, read with UVs that agree with the glTF's.
#[test]
fn cesium_man_from_blender_has_the_gltfs_texture() {
    let fbx = load(&common::fbx::converted("CesiumMan")).scene;
    let gltf = load(&common::model("CesiumMan")).scene;
    assert!(fbx.report.notes.is_empty(), "{:?}", notes(&fbx));
    assert_eq!(fbx.textures.len(), 1);
    assert_eq!(gltf.textures.len(), 1);
    let (a, b) = (&fbx.textures[0].image, &gltf.textures[0].image);
    assert_eq!((a.width, a.height), (b.width, b.height));
    assert!(a.pixels == b.pixels, "the decoded pixels differ");
    for s in [&fbx, &gltf] {
        for d in &s.draws {
            let p = s.primitive(d);
            assert_eq!(p.base_color_texture, Some(0), "{}", s.name);
            assert!(p.uvs.is_some());
        }
    }
    // The same UVs (V flipped twice: by Blender into FBX's convention, by the importer back),
    // as sets to 1e-4 (f32 round trips): the files split and order vertices their own ways.
    let uv_set = |s: &Scene| -> std::collections::HashSet<[i64; 2]> {
        s.draws
            .iter()
            .flat_map(|d| s.primitive(d).uvs.clone().unwrap())
            .map(|t| [(t.x * 1e4).round() as i64, (t.y * 1e4).round() as i64])
            .collect()
    };
    let (a, b) = (uv_set(&fbx), uv_set(&gltf));
    println!(
        "{} distinct UVs in the FBX, {} in the glTF",
        a.len(),
        b.len()
    );
    for (from, to, what) in [(&a, &b, "FBX"), (&b, &a, "glTF")] {
        let missing: Vec<_> = from
            .iter()
            .filter(|[u, v]| !(-1..=1).any(|du| (-1..=1).any(|dv| to.contains(&[u + du, v + dv]))))
            .collect();
        assert!(
            missing.is_empty(),
            "UVs of the {what} only (1e-4 units): {missing:?}"
        );
    }
}
