//! The vendored gRPC code is exactly what `scripts/gen-proto.sh` generates: evalctl's messages,
//! servers and clients from `proto/fep/v1/fep.proto`, and the client the gRPC tests use from the
//! FEP document's own `.proto` (`tests/fep_document/fep.proto`, section 5.2 as written).

#[allow(dead_code)]
#[path = "../examples/gen_proto.rs"]
mod gen_proto;

use std::path::Path;

#[test]
fn the_checked_in_grpc_code_is_what_the_protos_generate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let generated = gen_proto::generated(root);
    assert_eq!(generated.len(), 3);
    for (path, text) in generated {
        let checked_in = std::fs::read_to_string(root.join(&path))
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        assert!(
            checked_in == text,
            "{} is not what its .proto generates: run {}",
            path.display(),
            gen_proto::SCRIPT
        );
    }
}
