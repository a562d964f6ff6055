package turncheck.springai.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.memory.repository.jdbc.JdbcChatMemoryRepository;
import org.springframework.ai.chat.memory.repository.jdbc.PostgresChatMemoryRepositoryDialect;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Spring AI's {@link JdbcChatMemoryRepository} on PostgreSQL behind one {@link MessageWindowChatMemory}
 * bean, shared by {@code W} writer threads that each append {@code N} whole turns to one
 * conversation, recorded in turncheck's operation-history format (version 1) for
 * {@code turncheck stress --check}.
 *
 * <p>A turn is what that repository can store: a user message and the assistant's reply (it drops
 * tool calls and results), added with one {@code add}. The window is larger than the run, so the
 * memory evicts nothing and every acknowledged turn must survive. The repository keeps no journal,
 * so the history says {@code "journal": false} and ends with a read of the whole conversation.
 *
 * <p>Usage: {@code JdbcStress JDBC_URL WRITERS TURNS FOLDER}; writes {@code FOLDER/w<i>.jsonl} and
 * {@code FOLDER/store.jsonl}, which must not exist.
 */
public final class JdbcStress {

	private static final ObjectMapper JSON = new ObjectMapper();

	private static final String CONVERSATION = "turncheck-stress";

	private static final int STRIDE = 1_000_000;

	private JdbcStress() {
	}

	private static double now() {
		return System.currentTimeMillis() / 1000.0;
	}

	private static void write(OutputStream out, ObjectNode line) throws IOException {
		out.write((JSON.writeValueAsString(line) + "\n").getBytes(StandardCharsets.UTF_8));
		out.flush();
	}

	/** One run of a turn's rows: {@code [turn, turn]} when it is the whole turn in order, else {@code [turn, "kinds"]}. */
	private static void run(ArrayNode runs, int turn, String kinds) {
		ArrayNode pair = runs.addArray().add(turn);
		if (kinds.equals("UA")) {
			pair.add(turn);
		}
		else {
			pair.add(kinds);
		}
	}

	public static void main(String[] args) throws Exception {
		if (args.length != 4) {
			System.err.println("usage: JdbcStress JDBC_URL WRITERS TURNS FOLDER");
			System.exit(2);
		}
		int writers = Integer.parseInt(args[1]), turns = Integer.parseInt(args[2]);
		Path folder = Path.of(args[3]);
		Files.createDirectories(folder);
		JdbcTemplate jdbc = new JdbcTemplate(new DriverManagerDataSource(args[0]));
		try (InputStream schema = JdbcChatMemoryRepository.class
			.getResourceAsStream("/org/springframework/ai/chat/memory/repository/jdbc/schema-postgresql.sql")) {
			for (String statement : new String(schema.readAllBytes(), StandardCharsets.UTF_8).split(";")) {
				if (!statement.isBlank()) {
					jdbc.execute(statement);
				}
			}
		}
		var repository = JdbcChatMemoryRepository.builder()
			.jdbcTemplate(jdbc)
			.dialect(new PostgresChatMemoryRepositoryDialect())
			.build();
		repository.deleteByConversationId(CONVERSATION);
		int window = writers * turns * 2 + 2;
		ChatMemory memory = MessageWindowChatMemory.builder().chatMemoryRepository(repository).maxMessages(window).build();

		CountDownLatch go = new CountDownLatch(1);
		List<Thread> threads = new ArrayList<>();
		List<Throwable> errors = new ArrayList<>();
		double started = now();
		for (int w = 0; w < writers; w++) {
			int index = w;
			Thread thread = new Thread(() -> {
				String name = "w" + index;
				try (OutputStream out = Files.newOutputStream(folder.resolve(name + ".jsonl"), StandardOpenOption.CREATE_NEW,
						StandardOpenOption.WRITE)) {
					go.await();
					for (int n = 0; n < turns; n++) {
						int turn = index * STRIDE + n + 1;
						ObjectNode line = JSON.createObjectNode();
						line.put("op", "append").put("p", name).put("id", name + "-" + n).put("t0", now());
						try {
							memory.add(CONVERSATION, List.<Message>of(new UserMessage("turn " + turn + " U"),
									new AssistantMessage("turn " + turn + " A")));
							line.put("type", "ok").put("turn", turn);
						}
						catch (RuntimeException exc) {
							line.put("type", "fail").put("error", exc.getClass().getSimpleName() + ": " + exc.getMessage());
						}
						write(out, line.put("t1", now()));
					}
				}
				catch (Exception exc) {
					synchronized (errors) {
						errors.add(exc);
					}
				}
			});
			threads.add(thread);
			thread.start();
		}
		go.countDown();
		for (Thread thread : threads) {
			thread.join();
		}
		if (!errors.isEmpty()) {
			throw new IllegalStateException("a writer thread died", errors.get(0));
		}
		double ended = now();

		// the conversation as stored: runs of one turn's rows in order (the read window), and each
		// turn as often as its user or its assistant row is stored (the final live turns)
		ArrayNode runs = JSON.createArrayNode();
		Map<Integer, int[]> rows = new LinkedHashMap<>();
		int runTurn = -1;
		StringBuilder kinds = new StringBuilder();
		for (Message message : repository.findByConversationId(CONVERSATION)) {
			String[] words = message.getText().split(" ");
			int turn = Integer.parseInt(words[1]);
			rows.computeIfAbsent(turn, t -> new int[2])[words[2].equals("U") ? 0 : 1]++;
			if (turn != runTurn && runTurn != -1) {
				run(runs, runTurn, kinds.toString());
				kinds.setLength(0);
			}
			runTurn = turn;
			kinds.append(words[2]);
		}
		if (runTurn != -1) {
			run(runs, runTurn, kinds.toString());
		}
		ArrayNode live = JSON.createArrayNode();
		rows.forEach((turn, count) -> {
			for (int k = 0; k < Math.max(count[0], count[1]); k++) {
				live.add(turn);
			}
		});
		ObjectNode header = JSON.createObjectNode();
		header.put("op", "history").put("format", "turncheck-history").put("version", 1);
		header.put("store", "spring-ai-jdbc-postgresql").put("locking", "none").put("max_turns", window);
		header.put("writers", writers).put("gap_ms", 0.0).put("seconds", ended - started);
		header.put("started", started).put("ended", ended).put("journal", false);
		ObjectNode read = JSON.createObjectNode();
		read.put("op", "read").put("p", "final").put("type", "ok").put("t0", ended).put("t1", now());
		read.set("w", runs);
		ObjectNode fin = JSON.createObjectNode();
		fin.put("op", "final").set("live", live);
		try (OutputStream out = Files.newOutputStream(folder.resolve("store.jsonl"), StandardOpenOption.CREATE_NEW,
				StandardOpenOption.WRITE)) {
			write(out, header);
			write(out, read);
			write(out, fin);
		}
	}

}
