"""The verifier's exception type."""


class VerifyError(ValueError):
    """A problem with what the verifier was asked to do (bad input spec, unknown target, bad config).

    The message is meant for the user as-is: it says what was wrong and what a correct form looks like.
    """
