"""The shared training loop: resume equals an uninterrupted run, NaN stops cleanly."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.nn import Embedding, Linear, Module
from rowbook.optim import SGD, Adam
from rowbook.training import TrainConfig, Trainer, TrainingDiverged


class Tiny(Module):
    def __init__(self, seed: int) -> None:
        self.embedding = Embedding(10, 3, rng=seed)
        self.head = Linear(3, 1, rng=seed + 1)

    def forward(self, ids: np.ndarray):
        return self.head(self.embedding(ids)).reshape(-1)


def _data(n: int = 40):
    rng = np.random.default_rng(9)
    ids = rng.integers(0, 10, n)
    return ids, (ids % 3).astype(np.float32)


def _loss(model, batch):
    return ((model(batch[0]) - batch[1]) ** 2).mean()


def _trainer(model, **config):
    return Trainer(
        model,
        Adam(model.parameters(), lr=0.05),
        _loss,
        evaluate=lambda m, d: {"loss": float(_loss(m, d).data)},
        config=TrainConfig(batch_size=8, seed=3, **config),
    )


def test_resume_gives_the_same_weights_as_an_uninterrupted_run(tmp_path):
    data = _data()
    straight = Tiny(0)
    Trainer(
        straight,
        Adam(straight.parameters(), lr=0.05),
        _loss,
        config=TrainConfig(epochs=6, batch_size=8, seed=3),
    ).fit(data)

    path = tmp_path / "ckpt.npz"
    interrupted = Tiny(0)
    _trainer(interrupted, epochs=3).fit(data, checkpoint=path)
    resumed = Tiny(123)  # different starting weights: everything must come from the checkpoint
    history = _trainer(resumed, epochs=6).fit(data, checkpoint=path, resume=path)
    assert [e["epoch"] for e in history.epochs] == list(range(6))
    assert history.resumed_at == [3]
    for (name, a), (_, b) in zip(
        straight.named_parameters(), resumed.named_parameters(), strict=True
    ):
        np.testing.assert_array_equal(a.data, b.data, err_msg=name)


def test_training_reduces_the_loss_and_records_metrics():
    data = _data()
    history = _trainer(Tiny(0), epochs=15).fit(data, val=data)
    assert history.epochs[-1]["loss"] < 0.5 * history.epochs[0]["loss"]
    assert set(history.epochs[0]) == {"epoch", "loss", "val_loss"}
    assert history.stopped == "completed"


def test_nan_loss_stops_with_last_good_weights_and_checkpoint(tmp_path):
    data = _data()
    model = Tiny(0)
    calls = {"n": 0}

    def exploding(m, batch):
        calls["n"] += 1
        loss = _loss(m, batch)
        return loss * np.float32("nan") if calls["n"] > 12 else loss  # 5 batches per epoch

    path = tmp_path / "c.npz"
    trainer = Trainer(
        model,
        SGD(model.parameters(), lr=0.1),
        exploding,
        config=TrainConfig(epochs=5, batch_size=8),
    )
    with pytest.raises(TrainingDiverged, match=r"loss became nan at epoch 2, step 2.*c\.npz"):
        trainer.fit(data, checkpoint=path)
    # The model is back at the start of epoch 2, which is what the checkpoint (end of epoch 1) holds.
    saved = Tiny(5)
    Trainer(saved, SGD(saved.parameters(), lr=0.1), _loss, config=TrainConfig(epochs=2)).fit(
        data, resume=path
    )
    for (name, a), (_, b) in zip(model.named_parameters(), saved.named_parameters(), strict=True):
        np.testing.assert_array_equal(a.data, b.data, err_msg=name)


def test_early_stopping_watches_the_monitored_metric():
    scores = iter([0.5, 0.6, 0.55, 0.58, 0.59, 0.9])
    trainer = Trainer(
        Tiny(0),
        SGD(Tiny(0).parameters(), lr=0.0),
        _loss,
        evaluate=lambda m, d: {"accuracy": next(scores)},
        config=TrainConfig(epochs=6, patience=3, monitor="val_accuracy"),
    )
    history = trainer.fit(_data(), val=_data())
    assert history.stopped == "early_stopping"
    assert len(history.epochs) == 5  # best at epoch 1, then three epochs without improvement


def test_bad_settings_and_data_are_named():
    with pytest.raises(ValueError, match="TrainConfig: batch_size must be an integer >= 1, got 0"):
        TrainConfig(batch_size=0)
    with pytest.raises(ValueError, match="patience must be an integer >= 1 or None, got 0"):
        TrainConfig(patience=0)
    with pytest.raises(ValueError, match="epochs must be an integer >= 0, got -1"):
        TrainConfig(epochs=-1)
    model = Tiny(0)
    trainer = Trainer(model, SGD(model.parameters(), lr=0.1), _loss)
    with pytest.raises(ValueError, match=r"same length, got lengths \[3, 2\]"):
        trainer.fit((np.arange(3), np.zeros(2)))


def test_a_resume_path_not_written_yet_starts_afresh(tmp_path):
    data, path = _data(), tmp_path / "new.npz"
    fresh, again = Tiny(0), Tiny(0)
    _trainer(fresh, epochs=2).fit(data)
    history = _trainer(again, epochs=2).fit(data, checkpoint=path, resume=path)
    assert history.resumed_at == [] and path.exists()
    for (name, a), (_, b) in zip(fresh.named_parameters(), again.named_parameters(), strict=True):
        np.testing.assert_array_equal(a.data, b.data, err_msg=name)


def test_state_dict_round_trip_continues_bit_for_bit():
    data = _data()
    straight = _trainer(Tiny(0), epochs=4)
    straight.fit(data)
    first = _trainer(Tiny(0), epochs=2)
    first.fit(data)
    second = _trainer(Tiny(7), epochs=4)
    history = second.fit(data, resume=first.state_dict())
    assert history.resumed_at == [2] and len(history.epochs) == 4
    assert history.epochs == straight.history.epochs
    for name, value in straight.model.state_dict().items():
        np.testing.assert_array_equal(value, second.model.state_dict()[name], err_msg=name)


def test_checkpoint_of_another_kind_is_refused(tmp_path):
    from rowbook.io import save_state

    save_state(tmp_path / "ckpt.npz", {"x": np.ones(2)}, kind="vectors")
    with pytest.raises(ValueError, match="holds a 'vectors' file, expected 'checkpoint'"):
        _trainer(Tiny(0), epochs=1).fit(_data(), resume=tmp_path / "ckpt.npz")


def test_restore_best_puts_back_the_best_epochs_weights():
    scores = iter([0.5, 0.9, 0.6, 0.7])
    model = Tiny(0)
    seen = {}

    def evaluate(m, data):
        score = next(scores)
        seen[score] = m.state_dict()
        return {"accuracy": score}

    trainer = Trainer(
        model,
        SGD(model.parameters(), lr=0.1),
        _loss,
        evaluate=evaluate,
        config=TrainConfig(epochs=4, batch_size=8, monitor="val_accuracy", restore_best=True),
    )
    trainer.fit(_data(), val=_data())
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(value, seen[0.9][name], err_msg=name)
    assert not np.array_equal(model.state_dict()["head.weight"], seen[0.7]["head.weight"])


def test_progress_off_a_terminal_is_one_plain_line_per_epoch(capsys):
    trainer = _trainer(Tiny(0), epochs=3, progress=True)
    trainer.fit(_data(), val=_data())
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("epoch 1/3: loss ") and ", val_loss " in lines[0]
    assert "np.float64" not in lines[0] and "\r" not in lines[0]


def test_a_resumed_run_says_from_which_epoch(tmp_path, capsys):
    path = tmp_path / "ckpt.npz"
    _trainer(Tiny(0), epochs=2).fit(_data(), checkpoint=path)
    _trainer(Tiny(0), epochs=3, progress=True).fit(_data(), resume=path)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [lines[0], lines[1]] and lines[0] == "resumed at epoch 3 of 3"
    assert lines[1].startswith("epoch 3/3: loss ")


def test_the_bar_counts_batches_on_a_terminal(monkeypatch):
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    _trainer(Tiny(0), epochs=2, progress=True).fit(_data())  # 40 rows, batches of 8: 5 per epoch
    assert "10/10 [" in err.getvalue() and "batch/s" in err.getvalue()


def test_eval_on_start_and_on_train_fill_the_log(capsys):
    data = _data()

    def evaluate(m, d):
        return {"loss": float(_loss(m, d).data)}

    model = Tiny(0)
    before = evaluate(model, data)["loss"]
    trainer = Trainer(
        model,
        Adam(model.parameters(), lr=0.05),
        _loss,
        evaluate=evaluate,
        config=TrainConfig(
            epochs=3, batch_size=8, seed=3, eval_on_start=True, eval_on_train=True, progress=True
        ),
    )
    history = trainer.fit(data)
    assert history.initial == {"eval_loss": before}  # the untrained model, on the training data
    assert [sorted(e) for e in history.epochs] == [["epoch", "eval_loss", "loss"]] * 3
    assert history.epochs[-1]["eval_loss"] == evaluate(model, data)["loss"]  # the final weights
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"before training: eval_loss {before:.4g}" and len(lines) == 4
    # held-out data takes the place of the training data, under val_ names
    model = Tiny(0)
    trainer = Trainer(
        model,
        Adam(model.parameters(), lr=0.05),
        _loss,
        evaluate=evaluate,
        config=TrainConfig(epochs=2, batch_size=8, eval_on_start=True, eval_on_train=True),
    )
    history = trainer.fit(data, val=(data[0][:10], data[1][:10]))
    assert set(history.initial) == {"val_loss"} and "eval_loss" not in history.epochs[0]
    # both off (the default): no extra evaluation, as before they existed
    history = _trainer(Tiny(0), epochs=2).fit(data)
    assert history.initial == {} and sorted(history.epochs[0]) == ["epoch", "loss"]


def test_a_resumed_run_keeps_the_initial_scores(tmp_path):
    path = tmp_path / "ckpt.npz"
    config = {"batch_size": 8, "seed": 3, "eval_on_start": True}
    evaluate = lambda m, d: {"loss": float(_loss(m, d).data)}  # noqa: E731
    first = Trainer(
        Tiny(0),
        SGD(Tiny(0).parameters(), lr=0.1),
        _loss,
        evaluate=evaluate,
        config=TrainConfig(epochs=1, **config),
    ).fit(_data(), val=_data(), checkpoint=path)
    model = Tiny(5)
    resumed = Trainer(
        model,
        SGD(model.parameters(), lr=0.1),
        _loss,
        evaluate=evaluate,
        config=TrainConfig(epochs=2, **config),
    ).fit(_data(), val=_data(), resume=path)
    assert resumed.initial == first.initial and len(resumed.epochs) == 2
