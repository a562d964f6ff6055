"""The error types users see: each names the problem in one line the CLI prints as is."""


class TurncheckError(Exception):
    """Base of every error turncheck raises on purpose; the CLI turns it into one line, exit 2."""


class BadParameter(TurncheckError, ValueError):
    """A parameter out of its range or of the wrong type (negative budget, zero writers...)."""


class UnknownName(TurncheckError, KeyError):
    """An unknown strategy, cost model, scenario, model, invariant or parameter name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
