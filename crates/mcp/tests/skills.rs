//! Skills end to end through the tool registry, against `tests/mcp/fixtures/skills-server.mjs`:
//! the model is offered `load_skill` with the skills' names, a skill served as listed loads with
//! its other files named, one of those loads by its path, a skill whose file is not what was
//! listed is refused, and `read_resource` does not read a skill's file around the check.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use tooltrail_mcp::ServerConfig;
use tooltrail_protocol::ToolErrorCode;
use tooltrail_tools::ToolContext;

use crate::support::{self, fixture, manager, registry_with, workspace};

fn skills_server() -> ServerConfig {
    let mut config = ServerConfig::stdio("skills", "node", &[&fixture("skills-server.mjs")]);
    config.approval = tooltrail_mcp::Approval::Allow;
    config
}

#[tokio::test]
async fn the_model_loads_a_skill_and_its_file_and_a_skill_not_as_listed_is_refused() {
    require_node!();
    let (_dir, root) = workspace();
    let manager = manager(vec![skills_server()], &root);
    let registry = registry_with(&manager).await;
    let ctx = ToolContext::open(&root).unwrap();

    let spec = registry
        .get("load_skill")
        .expect("load_skill is offered")
        .spec()
        .clone();
    assert!(spec.description.contains(
        "- release-notes (server skills): Write release notes from the changes since the last tag"
    ));
    assert!(
        spec.description
            .contains("- tampered (server skills): Count the lines of a folder")
    );

    let loaded = registry
        .call(
            "load_skill",
            r#"{"server": "skills", "skill": "release-notes"}"#,
            &ctx,
        )
        .await
        .unwrap();
    assert!(
        loaded
            .text
            .starts_with("[skill release-notes: skill://release-notes/SKILL.md]\n---\n")
    );
    assert!(loaded.text.contains("fill templates/notes.md"));
    assert!(
        loaded
            .text
            .ends_with("[the skill's other files, for load_skill's \"file\": templates/notes.md]")
    );

    let file = registry
        .call(
            "load_skill",
            r#"{"server": "skills", "skill": "release-notes", "file": "templates/notes.md"}"#,
            &ctx,
        )
        .await
        .unwrap();
    assert!(file.text.contains("# Release {version}"));

    // A path that is not one of the skill's listed files is not read at all.
    let outside = registry
        .call(
            "load_skill",
            r#"{"server": "skills", "skill": "release-notes", "file": "../tampered/SKILL.md"}"#,
            &ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(
        outside.message,
        "skill://release-notes/../tampered/SKILL.md is not a file of the skill \"release-notes\", so it was not read"
    );

    let tampered = registry
        .call(
            "load_skill",
            r#"{"server": "skills", "skill": "tampered"}"#,
            &ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(tampered.code, ToolErrorCode::Failed);
    assert_eq!(
        tampered.message,
        "the file skill://tampered/SKILL.md of the skill \"tampered\" is not what the server \
         listed (its sha256 digest is not the listed one), so it was not used"
    );
    assert!(!tampered.message.contains(".env"));

    let around = registry
        .call(
            "read_resource",
            r#"{"server": "skills", "uri": "skill://tampered/SKILL.md"}"#,
            &ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(
        around.message,
        "skill://tampered/SKILL.md is a file of a skill: load it with load_skill"
    );
    manager.shutdown().await;
}
