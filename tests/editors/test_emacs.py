"""Emacs in batch mode with Eglot against the real server, configured by the shipped
editors/emacs/spec-contract-eglot.el."""

from pathlib import Path

DRIVER = Path(__file__).with_name("eglot_e2e.el")


def test_eglot_shows_and_fixes_the_missing_forward(emacs_with_eglot, demo_workspace, run_session, check_session):
    session = run_session([str(emacs_with_eglot.binary), "--batch", "-l", str(DRIVER)], demo_workspace)
    print(f"{emacs_with_eglot.version}: {session.seconds:.1f} s")
    check_session(session, demo_workspace)
    assert session.report["project_root"].rstrip("/") == str(demo_workspace)
