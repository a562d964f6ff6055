package turncheck.langchain4j;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.memory.ChatMemory;

import turncheck.exec.ExecTrimmer;
import turncheck.exec.ExecTrimmer.Budget;

/**
 * A langchain4j {@link ChatMemory} over turncheck's exec protocol: per request, a fresh memory from
 * {@code memory.apply(budget)} (a {@link Budget}: the tokens, and the newest messages that fit them
 * under turncheck's costs), every message of the request added in order (one {@code add}
 * each), and what {@code messages()} returns is sent, mapped back to the request's nodes by identity.
 *
 * <p>{@code user} becomes a {@link UserMessage}, an assistant with {@code tool_calls} an
 * {@link AiMessage} with one {@link ToolExecutionRequest} per call, {@code tool} a
 * {@link ToolExecutionResultMessage}, {@code system} a {@link SystemMessage}; a call's arguments
 * that are not a JSON object are passed as {@code {"input": text}} ({@link #argumentObject}).
 *
 * <pre>{@code
 * public final class MyMemory {
 *     public static void main(String[] args) {
 *         Langchain4jExec.serve(budget -> MessageWindowChatMemory.withMaxMessages(budget.messages()));
 *     }
 * }
 * }</pre>
 */
public final class Langchain4jExec {

	private static final ObjectMapper JSON = new ObjectMapper();

	private Langchain4jExec() {
	}

	/** Answer every request with a fresh memory from {@code memory}, until end of input. */
	public static void serve(Function<Budget, ChatMemory> memory) {
		ExecTrimmer.serveWithBudget((messages, budget) -> window(memory.apply(budget), messages));
	}

	/** What {@code memory} holds after each of {@code messages} was added to it in order. */
	public static List<JsonNode> window(ChatMemory memory, List<JsonNode> messages) {
		Map<ChatMessage, JsonNode> origin = new IdentityHashMap<>();
		Map<String, String> toolOf = new HashMap<>();
		for (JsonNode node : messages) {
			ChatMessage message = message(node, toolOf);
			origin.put(message, node);
			memory.add(message);
		}
		List<JsonNode> kept = new ArrayList<>();
		for (ChatMessage message : memory.messages()) {
			JsonNode node = origin.get(message);
			if (node == null) {
				throw new IllegalStateException("the memory returned a message it was not given: " + message);
			}
			kept.add(node);
		}
		return kept;
	}

	private static String text(JsonNode node) {
		JsonNode content = node.path("content");
		return content.isNull() || content.isMissingNode() ? "" : content.asText();
	}

	/**
	 * A call's arguments as a JSON object, as a model sends them: the text itself when it is one,
	 * else {@code {"input": text}} (turncheck's Python peers do the same). langchain4j's token
	 * estimators parse the arguments, and a log's call text need not be JSON.
	 */
	static String argumentObject(String text) {
		try {
			if (JSON.readTree(text) instanceof ObjectNode) {
				return text;
			}
		}
		catch (JsonProcessingException notJson) {
			// wrapped below
		}
		return JSON.createObjectNode().put("input", text).toString();
	}

	static ChatMessage message(JsonNode node, Map<String, String> toolOf) {
		String role = node.path("role").asText();
		switch (role) {
			case "user":
				return UserMessage.from(text(node));
			case "system":
				return SystemMessage.from(text(node));
			case "tool": {
				String id = node.path("tool_call_id").asText();
				return ToolExecutionResultMessage.from(id, toolOf.getOrDefault(id, ""), text(node));
			}
			case "assistant": {
				List<ToolExecutionRequest> calls = new ArrayList<>();
				for (JsonNode call : node.path("tool_calls")) {
					String id = call.path("id").asText(), name = call.path("function").path("name").asText();
					toolOf.put(id, name);
					calls.add(ToolExecutionRequest.builder().id(id).name(name)
						.arguments(argumentObject(call.path("function").path("arguments").asText())).build());
				}
				return calls.isEmpty() ? AiMessage.from(text(node)) : AiMessage.from(calls);
			}
			default:
				throw new IllegalArgumentException("a message with role " + role);
		}
	}

}
