"""Race tests that end their process, each a different way (tests/test_race_durations.py).

Not collected by pytest (no ``test_`` prefix): ``turncheck race tests/race_exits.py:NAME`` runs
them, and each must fail in one line, never pass. The last two never end at all: the
schedule's wall-clock bound (``--max-seconds``) fails them, naming where the loop was blocked.
"""

import asyncio
import concurrent.futures
import os
import sys
import threading
import time


async def exit_0() -> None:
    sys.exit(0)


async def exit_3() -> None:  # 3 is turncheck's "inconclusive": the test's code must not read as it
    await asyncio.sleep(0)
    sys.exit(3)


async def exit_in_a_child_task() -> None:
    async def child() -> None:
        await asyncio.sleep(0.01)
        sys.exit(0)

    await asyncio.gather(child(), asyncio.sleep(1))


async def exit_in_a_thread() -> None:
    await asyncio.to_thread(sys.exit, 0)


async def os_exit() -> None:
    os._exit(0)


async def os_exit_in_an_unawaited_task() -> None:
    asyncio.get_running_loop().create_task(asyncio.to_thread(os._exit, 5))
    await asyncio.sleep(1)


async def os_exit_in_a_callback() -> None:
    asyncio.get_running_loop().call_later(0.01, os._exit, 0)
    await asyncio.sleep(1)


async def os_exit_caught() -> None:
    try:
        os._exit(0)
    except BaseException:  # the real os._exit cannot be caught: neither can its stand-in's verdict
        pass


async def keyboard_interrupt() -> None:
    raise KeyboardInterrupt


async def exit_in_an_executor_job() -> None:
    await asyncio.get_running_loop().run_in_executor(None, sys.exit, 4)


def _interrupt() -> None:
    raise KeyboardInterrupt


async def keyboard_interrupt_in_an_executor_job() -> None:
    await asyncio.get_running_loop().run_in_executor(None, _interrupt)


async def exit_in_a_pool_the_test_passes() -> None:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        await asyncio.get_running_loop().run_in_executor(pool, sys.exit, 0)


async def os_exit_in_a_thread_the_test_starts() -> None:  # its thread is not the scheduler's
    thread = threading.Thread(target=os._exit, args=(0,))
    thread.start()
    await asyncio.to_thread(thread.join)


async def blocks_the_loop() -> None:  # never ends: --max-seconds stops it and names the call
    await asyncio.sleep(0)
    time.sleep(3600)


async def thread_work_never_returns() -> None:
    await asyncio.to_thread(threading.Event().wait)  # (a time.sleep in a job is a scheduling point)


# What production prints and loses (guard.Escaped): each fails its schedule, never a pass.


class OwnBase(BaseException):
    """A ``BaseException`` of the test's own (no ``Exception``)."""


def _raise_own() -> None:
    raise OwnBase("the test's own")


def _raise_generator_exit() -> None:
    raise GeneratorExit


def _start_and_join(target: object) -> None:
    thread = threading.Thread(target=target)  # type: ignore[arg-type]
    thread.start()
    thread.join()


async def own_base_in_a_callback() -> None:
    asyncio.get_running_loop().call_soon(_raise_own)
    await asyncio.sleep(0.01)


async def generator_exit_in_an_unawaited_task() -> None:
    async def child() -> None:
        _raise_generator_exit()

    asyncio.get_running_loop().create_task(child())
    await asyncio.sleep(0.01)


async def keyboard_interrupt_in_a_thread_the_test_starts() -> None:
    await asyncio.to_thread(_start_and_join, _interrupt)


async def exit_in_a_thread_the_test_starts() -> None:
    await asyncio.to_thread(_start_and_join, lambda: sys.exit(3))


async def error_in_a_thread_the_test_starts() -> None:
    await asyncio.to_thread(_start_and_join, lambda: [][1])


async def own_base_caught() -> None:  # the test catches it itself: a pass, not a false alarm
    async def child() -> None:
        await asyncio.sleep(0)
        _raise_own()

    try:
        await asyncio.create_task(child())
    except OwnBase:
        pass
