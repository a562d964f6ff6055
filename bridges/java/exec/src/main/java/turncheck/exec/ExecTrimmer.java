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
 * <p>turncheck writes one line {@code {"budget": B, "messages": [...]}} per request (OpenAI chat
 * messages, B the budget less the frame) and reads one line back: {@code {"messages": [...]}} with
 * the messages to send, or {@code {"error": "..."}}. A message sent unchanged must be returned as
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

	private static final ObjectMapper JSON = new ObjectMapper();

	private ExecTrimmer() {
	}

	/** Answer every request on standard input with {@code trimmer}, until end of input. */
	public static void serve(Trimmer trimmer) {
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

	/** The answer line to one request line (without its newline). */
	public static String answer(Trimmer trimmer, String line) {
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
			trimmer.trim(given, request.get("budget").asInt()).forEach(sent::add);
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
