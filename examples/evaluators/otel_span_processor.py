"""An OpenTelemetry SDK span processor that checks each model call the moment its span ends,
in the process that records it: ``provider.add_span_processor(ContextCheckProcessor(report))``.

``on_end`` runs on the thread that ends the span, before any exporter sees it, so a finding is
reported while the agent runs, whatever the spans are exported to (or if they are not)."""

from opentelemetry.sdk.trace import SpanProcessor

import turncheck


class ContextCheckProcessor(SpanProcessor):
    """Lint each finished GenAI span and call ``report(span, findings)`` for a broken one; a span
    that is no model call (an agent or tool span) has no findings. One ``Conversations`` carries
    what a span cannot know alone across the spans of a conversation."""

    def __init__(self, report, budget=None):
        self.report, self.budget = report, budget
        self.state = turncheck.Conversations()

    def on_start(self, span, parent_context=None):
        pass

    def on_end(self, span):
        findings = turncheck.lint_request(span, format="otel", budget=self.budget, state=self.state)
        if findings:
            self.report(span, findings)

    def shutdown(self):
        pass

    def force_flush(self, timeout_millis=30000):
        return True
