package turncheck.exec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A Java trimmer answering turncheck's exec protocol (version 1) on standard input and output.
 *
 * <p>turncheck writes one line {@code {"budget": B, "messages": [...], "costs": [...]}} per request
 * (OpenAI chat messages, B the budget less the frame, each message's cost under turncheck's cost
 * model) and reads one line back: {@code {"messages": [...]}} with the messages to send, or
 * {@code {"error": "..."}}. A message sent unchanged must be returned as
 * the very node it arrived as (or an equal one): that is how turncheck maps it back onto its log;
 * any other message counts as invented. {@link #serve} answers every line until end of input and
 * writes nothing else to standard output (a library's logging belongs on standard error).
 *
 * <pre>{@code
 * public final class KeepLast {
 *     public static void main(String[] args) {
 *         ExecTrimmer.serve((messages, budget) -> messages.subList(Math.max(0, messages.size() - budget), messages.size()));
 *     }
 * }
 * }</pre>
 */
public final class ExecTrimmer {

	/** The trimmer: the messages a request holds and its budget, to the messages to send. */
	@FunctionalInterface
	public interface Trimmer {

		List<JsonNode> trim(List<JsonNode> messages, int budget) throws Exception;

	}

	/**
	 * A request's budget two ways: {@code tokens}, the budget less the frame, and {@code messages},
	 * how many of the newest messages fit it under turncheck's costs (the best a message count can
	 * do; the tokens when the request carries no costs).
	 */
	public record Budget(int tokens, int messages) {
	}

	/** A trimmer told the request's {@link Budget}: what a chat memory's factory needs. */
	@FunctionalInterface
	public interface BudgetTrimmer {

		List<JsonNode> trim(List<JsonNode> messages, Budget budget) throws Exception;

	}

	private static final ObjectMapper JSON = new ObjectMapper();

	private ExecTrimmer() {
	}

	/** Answer every request on standard input with {@code trimmer}, until end of input. */
	public static void serve(Trimmer trimmer) {
		serveWithBudget((messages, budget) -> trimmer.trim(messages, budget.tokens()));
	}

	/** Answer every request on standard input with {@code trimmer}, told the {@link Budget}. */
	public static void serveWithBudget(BudgetTrimmer trimmer) {
		PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
				StandardCharsets.UTF_8);
		System.setOut(System.err); // nothing but answers on the protocol's stream
		try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
			String line;
			while ((line = in.readLine()) != null) {
				out.print(answer(trimmer, line));
				out.print('\n');
				out.flush();
			}
		}
		catch (IOException exc) {
			System.err.println("turncheck exec: " + exc);
			System.exit(1);
		}
	}

	private static Budget budget(JsonNode request) {
		int tokens = request.get("budget").asInt();
		JsonNode costs = request.path("costs");
		if (!costs.isArray()) {
			return new Budget(tokens, tokens);
		}
		int room = tokens, fit = 0;
		for (int i = costs.size() - 1; i >= 0 && costs.get(i).asInt() <= room; i--) {
			room -= costs.get(i).asInt();
			fit++;
		}
		return new Budget(tokens, fit);
	}

	/** The answer line to one request line (without its newline). */
	public static String answer(BudgetTrimmer trimmer, String line) {
		ObjectNode reply = JSON.createObjectNode();
		try {
			JsonNode request = JSON.readTree(line);
			JsonNode messages = request.path("messages");
			if (!messages.isArray() || !request.path("budget").canConvertToInt()) {
				throw new IllegalArgumentException("a request is {\"budget\": B, \"messages\": [...]}");
			}
			List<JsonNode> given = new ArrayList<>();
			messages.forEach(given::add);
			ArrayNode sent = reply.putArray("messages");
			trimmer.trim(given, budget(request)).forEach(sent::add);
		}
		catch (Exception exc) {
			reply.removeAll();
			reply.put("error", exc.getClass().getSimpleName() + ": " + exc.getMessage());
		}
		try {
			return JSON.writeValueAsString(reply);
		}
		catch (IOException exc) {
			throw new IllegalStateException(exc);
		}
	}

}
