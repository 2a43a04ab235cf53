"""The end-to-end scripts' verdict list: each check printed as it is judged, the failures kept
for the summary and the exit status."""


class Failures:
    def __init__(self):
        self.items = []

    def check(self, ok, what):
        print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            self.items.append(what)
