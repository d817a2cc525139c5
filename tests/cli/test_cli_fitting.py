"""Every ``rowbook train ...`` command stops on Ctrl-C the same way (rowbook.cli.fitting):
exit status 130 and one line saying what the checkpoint holds and how to go on."""

from __future__ import annotations

import pytest

import rowbook

COMMANDS = {
    "word2vec": ("Word2Vec", "plain"),
    "nplm": ("NPLM", "plain"),
    "lm": ("TransformerLM", "plain"),
    "classifier": ("FastTextClassifier", "labelled"),
}


def _corpus(tmp_path, kind):
    path = tmp_path / f"{kind}.txt"
    if kind == "labelled":
        path.write_text("__label__a the cat sat\n__label__b a dog ran\n" * 20)
    else:
        path.write_text("the cat sat on the mat\na dog ran in the park\n" * 20)
    return path


@pytest.mark.parametrize("saved", [False, True], ids=["nothing-saved", "checkpoint-saved"])
@pytest.mark.parametrize("model", list(COMMANDS))
def test_every_train_command_says_how_to_go_on_after_ctrl_c(
    run, tmp_path, monkeypatch, model, saved
):
    cls_name, kind = COMMANDS[model]
    cls = getattr(rowbook, cls_name)

    def stopped(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cls, "fit", stopped)
    checkpoint = tmp_path / "run.ckpt.npz"
    if saved:
        checkpoint.write_bytes(b"as if the first epoch had been saved")
    out = tmp_path / "out.npz"
    result = run("train", model, _corpus(tmp_path, kind), "-o", out, "--checkpoint", checkpoint)
    assert result.code == 130, result
    assert result.err.strip().splitlines() == [
        f"rowbook train {model}: interrupted; "
        + (
            f"{checkpoint} holds the last finished epoch; add --resume to the same command to "
            "continue"
            if saved
            else f"nothing was saved yet: {checkpoint} is written at the end of the first epoch"
        )
    ]
    assert not out.exists()
