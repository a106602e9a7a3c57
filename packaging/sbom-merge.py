#!/usr/bin/env python3
"""Merges cargo-cyclonedx's SBOMs of talos-cli and talosd into one CycloneDX document for the
release: the release (`talos` VERSION, both binaries) is the described component, the two crates
are its subcomponents, and the dependency components and graph are the union of both, sorted so
that the output depends only on the inputs (packaging/release.sh; docs/releasing.md).

usage: sbom-merge.py SOURCE_ROOT VERSION CLI_BOM TALOSD_BOM > talos-VERSION.cdx.json

cargo-cyclonedx names workspace crates by their absolute path (`path+file:///home/.../talos-cli`);
SOURCE_ROOT is written as /talos instead, as the release build remaps it, so that the SBOM does
not depend on where the tree was checked out.
"""

import json
import sys


def main(argv):
    if len(argv) != 5:
        sys.stderr.write("usage: sbom-merge.py SOURCE_ROOT VERSION CLI_BOM TALOSD_BOM\n")
        return 2
    root, version, paths = argv[1].rstrip("/"), argv[2], argv[3:]
    boms = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            boms.append(json.loads(handle.read().replace("file://" + root, "file:///talos")))
    first = boms[0]
    components, dependencies, crates = {}, {}, []
    for bom in boms:
        crate = bom["metadata"]["component"]
        crates.append(crate)
        for component in bom.get("components", []):
            components.setdefault(component["bom-ref"], component)
        for dependency in bom.get("dependencies", []):
            entry = dependencies.setdefault(dependency["ref"], set())
            entry.update(dependency.get("dependsOn", []))
    release_ref = f"talos-release@{version}"
    dependencies[release_ref] = {crate["bom-ref"] for crate in crates}
    metadata = dict(first["metadata"])
    metadata["component"] = {
        "type": "application",
        "bom-ref": release_ref,
        "name": "talos",
        "version": version,
        "description": "Talos release: the talos and talosd binaries",
        "components": sorted(crates, key=lambda crate: crate["bom-ref"]),
    }
    merged = {key: value for key, value in first.items() if key not in ("components", "dependencies")}
    merged["metadata"] = metadata
    merged["components"] = [components[key] for key in sorted(components)]
    merged["dependencies"] = [
        {"ref": ref, "dependsOn": sorted(dependencies[ref])} for ref in sorted(dependencies)
    ]
    json.dump(merged, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
