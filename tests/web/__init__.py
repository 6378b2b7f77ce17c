"""Browser tests of the web client (Playwright driving the system Chromium)."""
