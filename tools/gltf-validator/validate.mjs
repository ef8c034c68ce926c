// The Khronos glTF-Validator over each file named on the command line (.glb, or .gltf with
// its external files): one JSON line a file, {"file", "errors", "warnings", "messages"}
// (messages: the errors' codes, pointers and texts, at most 20). Exit 0 when it ran, whatever
// it found; 2 on a bad command line or an unreadable file.
import fs from "node:fs/promises";
import path from "node:path";
import validator from "gltf-validator";

const files = process.argv.slice(2);
if (files.length === 0) {
    console.error("usage: node validate.mjs FILE.glb|FILE.gltf...");
    process.exit(2);
}
for (const file of files) {
    let bytes;
    try {
        bytes = await fs.readFile(file);
    } catch (e) {
        console.error(`${file}: cannot read: ${e.message}`);
        process.exit(2);
    }
    const report = await validator.validateBytes(new Uint8Array(bytes), {
        uri: path.basename(file),
        maxIssues: 1000,
        externalResourceFunction: (uri) =>
            fs.readFile(path.resolve(path.dirname(file), decodeURIComponent(uri)))
                .then((data) => new Uint8Array(data)),
    });
    const errors = report.issues.messages.filter((m) => m.severity === 0);
    console.log(JSON.stringify({
        file,
        errors: report.issues.numErrors,
        warnings: report.issues.numWarnings,
        messages: errors.slice(0, 20).map((m) => `${m.code} ${m.pointer ?? ""}: ${m.message}`),
    }));
}
