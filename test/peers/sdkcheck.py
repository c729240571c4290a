"""Shared check for the vendor SDKs' (result, error) pairs (dynamixel_sdk and scservo_sdk share the convention)."""

COMM_SUCCESS = 0  # both SDKs


def ok(result: int, error: int, ph, expect_error: int = 0) -> None:
    """The transaction succeeded and the status packet's error byte is `expect_error` (0: no error)."""
    assert result == COMM_SUCCESS, ph.getTxRxResult(result)
    assert error == expect_error, ph.getRxPacketError(error)
