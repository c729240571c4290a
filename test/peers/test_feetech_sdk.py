"""Feetech's SCServo SDK (PyPI `feetech-servo-sdk`, module `scservo_sdk`, the one LeRobot's FeetechMotorsBus uses)
against `rlft servo-sim --bus feetech` (STS3215), over the same pty the drivers use.

Checks what an STS servo does per Feetech's protocol manual and memory table: ping and LeRobot-style broadcast
ping, read/write (a read-only register is ignored and answered with the fault bits only — Feetech has no access
error number), sync read/write, REG_WRITE + ACTION, goals clamped to the position limits, and the status fault
bits (overload releases the torque; the bit clears with its cause).
"""
import time

import pytest
from sdkcheck import ok
import scservo_sdk as scs
import scservo_sdk.port_handler as scs_port
from scservo_sdk.protocol_packet_handler import PKT_ID, PKT_INSTRUCTION, PKT_LENGTH

# STS3215 memory table addresses.
MODEL, MAX_POS, TORQUE, GOAL, LOCK, PRESENT, STATUS = 3, 11, 40, 42, 55, 56, 65
MODEL_STS3215 = 777

# The SDK waits 2 × LATENCY_TIMER + 2 ms for a status; the simulator answers through a pty on a shared CI machine.
scs_port.LATENCY_TIMER = 500


@pytest.fixture(scope="module")
def sts(servo_sim_module):
    sim, path = servo_sim_module("feetech", "1-5")
    port = scs.PortHandler(path)
    assert port.openPort(), f"cannot open {path}"
    assert port.setBaudRate(1_000_000)
    ph = scs.PacketHandler(0)  # STS/SMS: little-endian words
    yield sim, port, ph
    port.closePort()



def broadcast_ping(port, ph) -> dict[int, int]:
    """Ping to the broadcast id and collect every status (id → error byte), as LeRobot's
    FeetechMotorsBus._broadcast_ping does with scservo_sdk (the SDK itself has no broadcast ping)."""
    tx = [0] * 6
    tx[PKT_ID] = scs.BROADCAST_ID
    tx[PKT_LENGTH] = 2
    tx[PKT_INSTRUCTION] = scs.INST_PING
    assert ph.txPacket(port, tx) == scs.COMM_SUCCESS
    wait = 6 * scs.MAX_ID
    port.setPacketTimeoutMillis(wait * (10000.0 / port.getBaudRate()) + 3.0 * scs.MAX_ID + 16.0 + 300.0)
    rx: list[int] = []
    while not port.isPacketTimeout() and len(rx) < wait:
        rx += port.readPort(wait - len(rx))
    port.is_using = False
    found = {}
    i = 0
    while i + 6 <= len(rx):
        if rx[i] == 0xFF and rx[i + 1] == 0xFF and rx[i + 3] == 2:
            if (~sum(rx[i + 2 : i + 5]) & 0xFF) == rx[i + 5]:
                found[rx[i + 2]] = rx[i + 4]
                i += 6
                continue
        i += 1
    return found


def test_ping_and_broadcast_ping(sts):
    sim, port, ph = sts
    model, result, error = ph.ping(port, 2)
    ok(result, error, ph)
    assert model == MODEL_STS3215
    assert broadcast_ping(port, ph) == {1: 0, 2: 0, 3: 0, 4: 0, 5: 0}


def test_read_write_read_only_and_limits(sts):
    sim, port, ph = sts
    ok(*ph.write2ByteTxRx(port, 1, GOAL, 1000), ph)
    value, result, error = ph.read2ByteTxRx(port, 1, GOAL)
    ok(result, error, ph)
    assert value == 1000
    # Present Position is read-only: the servo ignores the write; the status has no error bit (Feetech has no access error).
    ok(*ph.write2ByteTxRx(port, 1, PRESENT, 5), ph)
    assert ph.read2ByteTxRx(port, 1, PRESENT)[0] == 2048
    # EEPROM is write-protected while Lock is 1: ignored. Unlocked, Max_Position_Limit takes, and goals are clamped to it.
    ok(*ph.write2ByteTxRx(port, 2, MAX_POS, 3000), ph)
    assert ph.read2ByteTxRx(port, 2, MAX_POS)[0] == 4095
    ok(*ph.write1ByteTxRx(port, 2, LOCK, 0), ph)
    ok(*ph.write2ByteTxRx(port, 2, MAX_POS, 3000), ph)
    ok(*ph.write2ByteTxRx(port, 2, GOAL, 3500), ph)
    assert ph.read2ByteTxRx(port, 2, GOAL)[0] == 3000


def test_sync_read_write(sts):
    sim, port, ph = sts
    sw = scs.GroupSyncWrite(port, ph, GOAL, 2)
    for i, g in [(3, 1500), (4, 2500), (5, 3000)]:
        assert sw.addParam(i, [scs.SCS_LOBYTE(g), scs.SCS_HIBYTE(g)])
    assert sw.txPacket() == scs.COMM_SUCCESS
    sr = scs.GroupSyncRead(port, ph, GOAL, 2)
    for i in (3, 4, 5):
        assert sr.addParam(i)
    assert sr.txRxPacket() == scs.COMM_SUCCESS
    assert [sr.getData(i, GOAL, 2) for i in (3, 4, 5)] == [1500, 2500, 3000]


def test_reg_write_then_action(sts):
    sim, port, ph = sts
    before = ph.read2ByteTxRx(port, 5, GOAL)[0]
    ok(*ph.regWriteTxRx(port, 5, GOAL, 2, [scs.SCS_LOBYTE(2222), scs.SCS_HIBYTE(2222)]), ph)
    assert ph.read2ByteTxRx(port, 5, GOAL)[0] == before, "a registered write waits for ACTION"
    assert ph.action(port, 5) == scs.COMM_SUCCESS
    assert ph.read2ByteTxRx(port, 5, GOAL)[0] == 2222


def test_overload_status_bit_and_recovery(sts):
    sim, port, ph = sts
    ok(*ph.write1ByteTxRx(port, 4, TORQUE, 1), ph)
    assert sim.command("fault 4 overload").startswith("ok")
    value, result, error = ph.read1ByteTxRx(port, 4, STATUS)
    assert result == scs.COMM_SUCCESS
    assert error == 0x20 and value == 0x20
    assert ph.getRxPacketError(error) == "[RxPacketError] Overload error!"
    assert ph.read1ByteTxRx(port, 4, TORQUE)[0] == 0, "overload is in Unloading_Condition: the servo released its torque"
    # The cause goes away: the bit clears and torque can be switched on again.
    assert sim.command("clear 4").startswith("ok")
    ok(*ph.write1ByteTxRx(port, 4, TORQUE, 1), ph)
    assert ph.read1ByteTxRx(port, 4, TORQUE)[0] == 1
    # A voltage fault (not in Unloading_Condition) is reported, torque stays on.
    assert sim.command("fault 3 voltage").startswith("ok")
    _, _, error = ph.read1ByteTxRx(port, 3, STATUS)
    assert ph.getRxPacketError(error) == "[RxPacketError] Input voltage error!"
