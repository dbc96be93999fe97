#!/bin/sh
# Make Debian's chromium available for the report rendering test (tests/report/test_report_chromium.py).
# Idempotent: does nothing when chromium is already installed; installs it with apt-get only when
# running as root on a system that has apt-get. Never fails the build: without chromium that one
# test is skipped with the reason.
set -u
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_chromium: chromium is missing and cannot be installed here (needs root and apt-get); the report rendering test will be skipped" >&2
    exit 0
fi
echo "ensure_chromium: installing chromium with apt-get (takes a while)" >&2
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; then
    exit 0
fi
echo "ensure_chromium: apt-get could not install chromium; the report rendering test will be skipped" >&2
exit 0
