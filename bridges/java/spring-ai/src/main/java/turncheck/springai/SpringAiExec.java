package turncheck.springai;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import com.fasterxml.jackson.databind.JsonNode;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;

import turncheck.exec.ExecTrimmer;
import turncheck.exec.ExecTrimmer.Budget;

/**
 * A Spring AI {@link ChatMemory} over turncheck's exec protocol: per request, a fresh memory from
 * {@code memory.apply(budget)} (a {@link Budget}: the tokens, and the newest messages that fit
 * them under turncheck's costs), every message of the request added to it in order — one
 * {@code add} each, as a conversation grows — and what {@code get} returns is sent.
 *
 * <p>The OpenAI messages become Spring AI's own: {@code user} a {@link UserMessage}, an assistant
 * with {@code tool_calls} an {@link AssistantMessage} carrying one {@code ToolCall} per call,
 * {@code tool} a {@link ToolResponseMessage}, {@code system} a {@link SystemMessage}. Each message
 * the memory keeps maps back to the request's node by identity, so a memory that returns a message
 * it was not given is an error. One source builds against every Spring AI line: 1.0 constructs
 * messages with constructors, 1.1 and later with builders, chosen by reflection.
 *
 * <pre>{@code
 * public final class MyMemory {
 *     public static void main(String[] args) {
 *         SpringAiExec.serve(budget -> MessageWindowChatMemory.builder().maxMessages(budget.messages()).build());
 *     }
 * }
 * }</pre>
 */
public final class SpringAiExec {

	/** The conversation id every request uses. */
	public static final String CONVERSATION = "turncheck";

	private SpringAiExec() {
	}

	/** Answer every request with a fresh memory from {@code memory}, until end of input. */
	public static void serve(Function<Budget, ChatMemory> memory) {
		ExecTrimmer.serveWithBudget((messages, budget) -> window(memory.apply(budget), messages));
	}

	/** What {@code memory} holds after each of {@code messages} was added to it in order. */
	public static List<JsonNode> window(ChatMemory memory, List<JsonNode> messages) throws ReflectiveOperationException {
		Map<Message, JsonNode> origin = new IdentityHashMap<>();
		Map<String, String> toolOf = new HashMap<>();
		for (JsonNode node : messages) {
			Message message = message(node, toolOf);
			origin.put(message, node);
			memory.add(CONVERSATION, List.of(message));
		}
		List<JsonNode> kept = new ArrayList<>();
		for (Message message : memory.get(CONVERSATION)) {
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

	static Message message(JsonNode node, Map<String, String> toolOf) throws ReflectiveOperationException {
		String role = node.path("role").asText();
		switch (role) {
			case "user":
				return new UserMessage(text(node));
			case "system":
				return new SystemMessage(text(node));
			case "tool": {
				String id = node.path("tool_call_id").asText();
				var response = new ToolResponseMessage.ToolResponse(id, toolOf.getOrDefault(id, ""), text(node));
				return build(ToolResponseMessage.class, "responses", List.of(response));
			}
			case "assistant": {
				List<AssistantMessage.ToolCall> calls = new ArrayList<>();
				for (JsonNode call : node.path("tool_calls")) {
					String id = call.path("id").asText(), name = call.path("function").path("name").asText();
					toolOf.put(id, name);
					calls.add(new AssistantMessage.ToolCall(id, "function", name,
							call.path("function").path("arguments").asText()));
				}
				return calls.isEmpty() ? new AssistantMessage(text(node)) : assistant(text(node), calls);
			}
			default:
				throw new IllegalArgumentException("a message with role " + role);
		}
	}

	private static Message assistant(String text, List<AssistantMessage.ToolCall> calls) throws ReflectiveOperationException {
		try {
			Object builder = AssistantMessage.class.getMethod("builder").invoke(null);
			builder = call(builder, "content", String.class, text);
			builder = call(builder, "toolCalls", List.class, calls);
			return (Message) builder.getClass().getMethod("build").invoke(builder);
		}
		catch (NoSuchMethodException before11) {
			return AssistantMessage.class.getConstructor(String.class, Map.class, List.class)
				.newInstance(text, Map.of(), calls);
		}
	}

	private static Message build(Class<? extends Message> type, String setter, List<?> value) throws ReflectiveOperationException {
		try {
			Object builder = type.getMethod("builder").invoke(null);
			builder = call(builder, setter, List.class, value);
			return (Message) builder.getClass().getMethod("build").invoke(builder);
		}
		catch (NoSuchMethodException before11) {
			return type.getConstructor(List.class).newInstance(value);
		}
	}

	private static Object call(Object target, String name, Class<?> type, Object value) throws ReflectiveOperationException {
		Method method = target.getClass().getMethod(name, type);
		method.setAccessible(true);
		return method.invoke(target, value);
	}

}
