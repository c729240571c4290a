"""ROBOTIS' DYNAMIXEL SDK (PyPI `dynamixel-sdk`, Protocol 2.0) against `rlft servo-sim --bus dynamixel` (XL330).

What a Dynamixel X servo does per the e-Manual, seen through the vendor's client over the same pty the drivers use:
ping and broadcast ping, read/write and their error numbers (Access, Data Limit, Data Range), sync and bulk
read/write, REG_WRITE + ACTION, a hardware-error shutdown cleared only by REBOOT, and the Bus Watchdog.
"""
import time

import pytest
from sdkcheck import ok
import dynamixel_sdk.port_handler as dxl_port
from dynamixel_sdk import (
    COMM_SUCCESS,
    GroupBulkRead,
    GroupBulkWrite,
    GroupSyncRead,
    GroupSyncWrite,
    PacketHandler,
    PortHandler,
)

# XL330-M288-T control table (e-Manual): addresses used below.
OPERATING_MODE, MAX_POS, MIN_POS = 11, 48, 52
TORQUE, HW_ERROR, WATCHDOG = 64, 70, 98
GOAL, PRESENT = 116, 132
MODEL_XL330 = 1200


# The SDK waits 2 × LATENCY_TIMER (an FTDI adapter's 16 ms) + 2 ms for a status. The simulator answers through
# a pty from a Node process on a shared CI machine: give it what a slow USB adapter gets.
dxl_port.LATENCY_TIMER = 500


@pytest.fixture(scope="module")
def dxl(servo_sim_module):
    # Five servos, one per test below where state matters (faults, limits), so one simulator serves the module.
    sim, path = servo_sim_module("dynamixel", "1-5")
    port = PortHandler(path)
    assert port.openPort(), f"cannot open {path}"
    assert port.setBaudRate(1_000_000)
    ph = PacketHandler(2.0)
    yield sim, port, ph
    port.closePort()


def test_ping_and_broadcast_ping(dxl):
    sim, port, ph = dxl
    model, result, error = ph.ping(port, 2)
    ok(result, error, ph)
    assert model == MODEL_XL330
    found, result = ph.broadcastPing(port)
    assert result == COMM_SUCCESS, ph.getTxRxResult(result)
    assert sorted(found) == [1, 2, 3, 4, 5]
    assert all(v[0] == MODEL_XL330 for v in found.values())
    _, result, _ = ph.ping(port, 9)
    assert result != COMM_SUCCESS  # no servo 9 on the bus: silence


def test_read_write_and_error_numbers(dxl):
    sim, port, ph = dxl
    ok(*ph.write4ByteTxRx(port, 1, GOAL, 1000), ph)
    value, result, error = ph.read4ByteTxRx(port, 1, GOAL)
    ok(result, error, ph)
    assert value == 1000
    # Present Position is read-only: Access Error (7), nothing written.
    result, error = ph.write4ByteTxRx(port, 1, PRESENT, 5)
    ok(result, error, ph, expect_error=7)
    # EEPROM (Operating Mode) with torque on: Access Error.
    ok(*ph.write1ByteTxRx(port, 1, TORQUE, 1), ph)
    result, error = ph.write1ByteTxRx(port, 1, OPERATING_MODE, 4)
    ok(result, error, ph, expect_error=7)
    # A goal beyond Max Position Limit in position mode: Data Limit Error (6), goal unchanged.
    ok(*ph.write1ByteTxRx(port, 2, TORQUE, 0), ph)
    ok(*ph.write4ByteTxRx(port, 2, MAX_POS, 3000), ph)
    result, error = ph.write4ByteTxRx(port, 2, GOAL, 3500)
    ok(result, error, ph, expect_error=6)
    value, result, error = ph.read4ByteTxRx(port, 2, GOAL)
    assert value == 2048


def test_sync_and_bulk_read_write(dxl):
    sim, port, ph = dxl
    sw = GroupSyncWrite(port, ph, GOAL, 4)
    for i, g in [(3, 1500), (4, 2500), (5, 3000)]:
        assert sw.addParam(i, list(g.to_bytes(4, "little")))
    assert sw.txPacket() == COMM_SUCCESS
    sr = GroupSyncRead(port, ph, GOAL, 4)
    for i in (3, 4, 5):
        assert sr.addParam(i)
    assert sr.txRxPacket() == COMM_SUCCESS
    assert [sr.getData(i, GOAL, 4) for i in (3, 4, 5)] == [1500, 2500, 3000]
    # Bulk: a different address and length per servo.
    bw = GroupBulkWrite(port, ph)
    assert bw.addParam(3, GOAL, 4, list((1234).to_bytes(4, "little")))
    assert bw.addParam(4, TORQUE, 1, [1])
    assert bw.txPacket() == COMM_SUCCESS
    br = GroupBulkRead(port, ph)
    assert br.addParam(3, GOAL, 4)
    assert br.addParam(4, TORQUE, 1)
    assert br.addParam(5, PRESENT, 4)
    assert br.txRxPacket() == COMM_SUCCESS
    assert br.getData(3, GOAL, 4) == 1234
    assert br.getData(4, TORQUE, 1) == 1
    assert br.getData(5, PRESENT, 4) == 2048
    assert sim.stats()["bulkReads"] == 1


def test_reg_write_then_action(dxl):
    sim, port, ph = dxl
    before, _, _ = ph.read4ByteTxRx(port, 5, GOAL)
    ok(*ph.regWriteTxRx(port, 5, GOAL, 4, list((2222).to_bytes(4, "little"))), ph)
    value, _, _ = ph.read4ByteTxRx(port, 5, GOAL)
    assert value == before, "a registered write waits for ACTION"
    assert ph.action(port, 5) == COMM_SUCCESS
    # The servo answers ACTION (e-Manual §Action example); the SDK does not read that status but clears the port
    # before its next request — on hardware the status is there by then; give the simulator's pty the time too.
    time.sleep(0.2)
    value, _, _ = ph.read4ByteTxRx(port, 5, GOAL)
    assert value == 2222


def test_overload_shutdown_and_reboot(dxl):
    sim, port, ph = dxl
    ok(*ph.write1ByteTxRx(port, 2, TORQUE, 1), ph)
    assert sim.command("fault 2 overload").startswith("ok")
    # Every status now carries the Alert bit; Hardware Error Status says Overload (bit 5); torque went off.
    value, result, error = ph.read1ByteTxRx(port, 2, HW_ERROR)
    assert result == COMM_SUCCESS and error & 0x80
    assert value == 1 << 5
    assert ph.read1ByteTxRx(port, 2, TORQUE)[0] == 0
    # Only REBOOT brings torque back (e-Manual Shutdown(63)): a write of 1 leaves it 0.
    ph.write1ByteTxRx(port, 2, TORQUE, 1)
    assert ph.read1ByteTxRx(port, 2, TORQUE)[0] == 0
    result, error = ph.reboot(port, 2)
    assert result == COMM_SUCCESS, ph.getTxRxResult(result)
    time.sleep(0.1)
    value, result, error = ph.read1ByteTxRx(port, 2, HW_ERROR)
    ok(result, error, ph)
    assert value == 0
    ok(*ph.write1ByteTxRx(port, 2, TORQUE, 1), ph)
    assert ph.read1ByteTxRx(port, 2, TORQUE)[0] == 1


def test_bus_watchdog_refuses_goals_until_cleared(dxl):
    sim, port, ph = dxl
    ok(*ph.write1ByteTxRx(port, 1, TORQUE, 1), ph)
    ok(*ph.write1ByteTxRx(port, 1, WATCHDOG, 5), ph)  # 5 × 20 ms
    time.sleep(0.3)  # the host goes silent longer than that
    value, result, error = ph.read1ByteTxRx(port, 1, WATCHDOG)
    ok(result, error, ph)
    assert value == 0xFF, "Bus Watchdog reads -1 after it tripped"
    result, error = ph.write4ByteTxRx(port, 1, GOAL, 1000)
    ok(result, error, ph, expect_error=4)  # Data Range Error: goals are read-only now
    ok(*ph.write1ByteTxRx(port, 1, WATCHDOG, 0), ph)  # clears the error
    ok(*ph.write4ByteTxRx(port, 1, GOAL, 1000), ph)
