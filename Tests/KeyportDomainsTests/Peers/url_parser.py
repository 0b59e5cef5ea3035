"""Reads URLs as a browser does, for Keyport's URL tests.

Usage: url_parser.py < urls.json

Standard input is a JSON array of strings. Headless chromium (through Selenium and
chromium-driver) parses each with the page's `new URL(...)`, the WHATWG URL parser browsers use
for the address a page is at. Standard output is a JSON array, one element per input: `null`
when chromium refuses the URL, else `[protocol, hostname, port]` as the URL object gives them
(`"https:"`, `"example.com"`, `""` for the scheme's default port).
"""
import json
import os
import sys

os.environ.setdefault("SE_AVOID_STATS", "true")

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
    options.add_argument(argument)
urls = json.load(sys.stdin)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    parsed = driver.execute_script(
        """return arguments[0].map(text => {
            try { const url = new URL(text); return [url.protocol, url.hostname, url.port]; }
            catch (error) { return null; }
        });""",
        urls,
    )
finally:
    driver.quit()
json.dump(parsed, sys.stdout)
