//! `folio chat` in a pseudo-terminal, typed at as a person would: the real
//! CLI and the kit's real SmolLM2 (llm-only, so no index is needed). Ctrl-C
//! while an answer streams stops that answer and keeps the session and the
//! thread; the prompt's line history survives to the next session; Ctrl-D
//! leaves with success.

mod common;

use std::path::Path;
use std::process::Command;

use rexpect::process::WaitStatus;
use rexpect::session::PtySession;

/// rexpect reads bytes one by one as chars, so expectations stay ASCII (the
/// prompt's `·` and `›` arrive as two and three chars). Generous: the model
/// loads on the first question.
const TIMEOUT_MS: u64 = 120_000;

fn chat(data: &Path) -> PtySession {
    let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
    command
        .arg("--data-dir")
        .arg(data)
        .args(["chat", "--method", "llm-only", "--temperature", "0"])
        .env("FOLIO_CONFIG", "/dev/null")
        .env("FOLIO_LLM_MODEL", common::engine::tiny_model())
        .env("FOLIO_LLM_THREADS", "1")
        .env("TERM", "xterm");
    rexpect::spawn_with_options(
        command,
        rexpect::reader::Options::new()
            .timeout_ms(Some(TIMEOUT_MS))
            .strip_ansi_escape_codes(true),
    )
    .unwrap()
}

fn leave(mut session: PtySession) {
    session.send_control('d').unwrap();
    session.exp_eof().unwrap();
    assert!(
        matches!(session.process().wait().unwrap(), WaitStatus::Exited(_, 0)),
        "Ctrl-D leaves with success"
    );
}

#[test]
fn ctrl_c_stops_the_answer_not_the_session() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let mut session = chat(&data);
    session.exp_string("new thread] ").unwrap();
    session
        .send_line("Write a very long essay about the history of memory, in twenty parts.")
        .unwrap();
    session.exp_string("twenty parts.").unwrap();
    // A word of the answer streaming in.
    session.exp_regex("[A-Za-z]{4,}").unwrap();
    session.send_control('c').unwrap();
    session.exp_string("(stopped").unwrap();
    session.exp_string("cancelled").unwrap();
    session.exp_string("thread 1] ").unwrap();

    session.send_line("/method nonsense").unwrap();
    session.exp_string("no method `nonsense`").unwrap();
    session.send_line("Say hello.").unwrap();
    session
        .exp_regex("run 2 .{1,4} thread 1 .{1,4} (done|failed)")
        .unwrap();
    let export = root.path().join("chat.md");
    session
        .send_line(&format!("/export {}", export.display()))
        .unwrap();
    session.exp_string("wrote").unwrap();
    leave(session);

    let text = std::fs::read_to_string(&export).unwrap();
    assert!(text.contains("*thread 1 · 2 turns*"), "{text}");
    assert!(text.contains("run 1 · cancelled"), "{text}");
    assert!(text.contains("## Say hello."), "{text}");

    // The next session offers the last line again on the Up arrow.
    let mut session = chat(&data);
    session.exp_string("thread] ").unwrap();
    session.send("\x1b[A").unwrap();
    session.flush().unwrap();
    session
        .exp_string(&format!("/export {}", export.display()))
        .unwrap();
    session.send_control('c').unwrap();
    session.exp_string("thread] ").unwrap();
    leave(session);
}

#[test]
fn scope_commands_narrow_and_widen_what_the_questions_draw_from() {
    let root = tempfile::tempdir().unwrap();
    let notes = root.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("a.md"), "# A\n\nApples grow on trees.\n").unwrap();
    std::fs::write(notes.join("b.md"), "# B\n\nBananas grow in bunches.\n").unwrap();
    let data = root.path().join("data");
    let added = Command::new(env!("CARGO_BIN_EXE_folio"))
        .arg("--data-dir")
        .arg(&data)
        .arg("add")
        .arg(&notes)
        .env("FOLIO_CONFIG", "/dev/null")
        .output()
        .unwrap();
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );

    let mut session = chat(&data);
    session.exp_string("new thread] ").unwrap();
    session.send_line("/scope").unwrap();
    session.exp_string("scope: the whole library").unwrap();
    let a = std::fs::canonicalize(notes.join("a.md")).unwrap();
    session
        .send_line(&format!("/scope in {}", a.display()))
        .unwrap();
    session.exp_string("(1 document)").unwrap();
    session.exp_string("scoped] ").unwrap();
    // A scope that would match nothing is refused and the last one kept.
    session.send_line("/scope format pdf").unwrap();
    session
        .exp_string("nothing indexed matches the scope")
        .unwrap();
    session.send_line("/scope").unwrap();
    session.exp_string("(1 document)").unwrap();
    session
        .send_line(&format!(
            "/scope in {}",
            root.path().join("elsewhere").display()
        ))
        .unwrap();
    session.exp_string("is not in the library").unwrap();
    session.send_line("/scope since 2020-02-30").unwrap();
    session.exp_string("YYYY-MM-DD").unwrap();
    session.send_line("/scope clear").unwrap();
    session.exp_string("scope: the whole library").unwrap();
    session.exp_string("new thread] ").unwrap();
    leave(session);
}
