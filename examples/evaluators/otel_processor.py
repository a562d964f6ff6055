"""An OpenTelemetry span exporter that checks each model call on its way out, then passes the
spans on: the place a collector's processor takes in a pipeline of Python exporters."""

from opentelemetry.sdk.trace.export import SpanExporter

import turncheck


class ContextCheck(SpanExporter):
    """Lint each GenAI span, call ``report(span, findings)`` for a broken one, export them all."""

    def __init__(self, downstream, report, budget=None):
        self.downstream, self.report, self.budget = downstream, report, budget
        self.state = turncheck.Conversations()

    def export(self, spans):
        for span in spans:
            findings = turncheck.lint_request(span, format="otel", budget=self.budget, state=self.state)
            if findings:
                self.report(span, findings)
        return self.downstream.export(spans)

    def shutdown(self):
        self.downstream.shutdown()
